package go18dump

import (
	"strings"
	"testing"
)

// The expected dumps are written from go1.8.3's sources (time.Time{sec,
// nsec, loc}, big.Word uintptr) and go-spew's printing, not produced by
// Rewrite.
func TestRewrite(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{
			"zero time (a manifest without creationTimestamp)",
			`(v1.ObjectMeta){CreationTimestamp:(v1.Time){Time:(time.Time){wall:(uint64)0 ext:(int64)0 loc:(*time.Location)<nil>}}}`,
			`(v1.ObjectMeta){CreationTimestamp:(v1.Time){Time:(time.Time){sec:(int64)0 nsec:(int32)0 loc:(*time.Location)<nil>}}}`,
		},
		{
			// 2017-01-01T00:00:00.5Z: 1483228800 s after 1970, 62135596800 s
			// from year 1 to 1970.
			"a set time in UTC with nanoseconds",
			`(time.Time){wall:(uint64)500000000 ext:(int64)63618825600 loc:(*time.Location)<nil>}`,
			`(time.Time){sec:(int64)63618825600 nsec:(int32)500000000 loc:(*time.Location)<nil>}`,
		},
		{
			"Local without zone tables (TZ=UTC)",
			`loc:(*time.Location){name:(string)UTC zone:([]time.zone)<nil> tx:([]time.zoneTrans)<nil> extend:(string) cacheStart:(int64)0 cacheEnd:(int64)0 cacheZone:(*time.zone)<nil>}`,
			`loc:(*time.Location){name:(string)UTC zone:([]time.zone)<nil> tx:([]time.zoneTrans)<nil> cacheStart:(int64)0 cacheEnd:(int64)0 cacheZone:(*time.zone)<nil>}`,
		},
		{
			"inf.Dec words: 1.5Gi is 1610612736, a zero word is a nil uintptr",
			`abs:(big.nat)[1610612736] abs:(big.nat)[0 255] abs:(big.nat)<nil>`,
			`abs:(big.nat)[0x60000000] abs:(big.nat)[<nil> 0xff] abs:(big.nat)<nil>`,
		},
	} {
		got, err := Rewrite(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.name, got, err, tc.want)
		}
	}
}

func TestRewriteRefuses(t *testing.T) {
	for _, in := range []string{
		// A zone table: go1.8.3's cache depended on the start time.
		`loc:(*time.Location){name:(string)Local zone:([]time.zone)[{name:(string)CET offset:(int)3600 isDST:(bool)false}] tx:`,
		// A monotonic reading (time.Now()) has no go1.8.3 counterpart.
		`(time.Time){wall:(uint64)13887429658425344000 ext:(int64)1 loc:(*time.Location)<nil>}`,
	} {
		if got, err := Rewrite(in); err == nil {
			t.Errorf("Rewrite(%s) = %s, want an error", in, got)
		} else if !strings.HasPrefix(err.Error(), "go18dump: ") {
			t.Errorf("error %q does not name the package", err)
		}
	}
}
