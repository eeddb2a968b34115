package resource

import (
	"testing"

	"github.com/davecgh/go-spew/spew"
	stdresource "k8s.io/apimachinery/pkg/api/resource"
)

// printer is the kubelet's hash printer (pkg/util/hash).
var printer = spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}

const (
	noInt = `i:(resource.int64Amount){value:(int64)0 scale:(resource.Scale)0}`
	noDec = `d:(resource.infDecAmount){Dec:(*inf.Dec)<nil>}`
)

// The expected texts are what a go1.8.3-built 1.7.5 held after
// ParseQuantity (read from its quantity.go and inf.v0), printed through
// this go-spew. Values ParseQuantity keeps as inf.Dec are rounded up to
// scale 9 (nano): 1.5Gi is 1610612736000000000e-9, words in hex.
func TestFrom(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{"1.5Gi", `(resource.Quantity){` + noInt + ` d:(resource.infDecAmount){Dec:(*inf.Dec){unscaled:(big.Int){neg:(bool)false abs:(big.nat)[0x165a0bc000000000]} scale:(inf.Scale)9}} s:(string) Format:(resource.Format)BinarySI}`},
		{"-1.5Gi", `(resource.Quantity){` + noInt + ` d:(resource.infDecAmount){Dec:(*inf.Dec){unscaled:(big.Int){neg:(bool)true abs:(big.nat)[0x165a0bc000000000]} scale:(inf.Scale)9}} s:(string) Format:(resource.Format)BinarySI}`},
		{"0.5Gi", `(resource.Quantity){` + noInt + ` d:(resource.infDecAmount){Dec:(*inf.Dec){unscaled:(big.Int){neg:(bool)false abs:(big.nat)[0x773594000000000]} scale:(inf.Scale)9}} s:(string) Format:(resource.Format)BinarySI}`},
		// 2^64 * 10^9 = 10^9 * 2^64: a zero low word, printed <nil>.
		{"18446744073709551616", `(resource.Quantity){` + noInt + ` d:(resource.infDecAmount){Dec:(*inf.Dec){unscaled:(big.Int){neg:(bool)false abs:(big.nat)[<nil> 0x3b9aca00]} scale:(inf.Scale)9}} s:(string) Format:(resource.Format)DecimalSI}`},
		// Zero is not rounded, and its magnitude stays nil (go1.8.3's
		// nat.scan and nat.mul leave it so).
		{"0.0Ki", `(resource.Quantity){` + noInt + ` d:(resource.infDecAmount){Dec:(*inf.Dec){unscaled:(big.Int){neg:(bool)false abs:(big.nat)<nil>} scale:(inf.Scale)1}} s:(string) Format:(resource.Format)BinarySI}`},
		// The int64 fast path: no inf.Dec, s kept only when canonical.
		{"0.5", `(resource.Quantity){i:(resource.int64Amount){value:(int64)5 scale:(resource.Scale)-1} ` + noDec + ` s:(string) Format:(resource.Format)DecimalSI}`},
		{"100m", `(resource.Quantity){i:(resource.int64Amount){value:(int64)100 scale:(resource.Scale)-3} ` + noDec + ` s:(string)100m Format:(resource.Format)DecimalSI}`},
		{"128Mi", `(resource.Quantity){i:(resource.int64Amount){value:(int64)134217728 scale:(resource.Scale)0} ` + noDec + ` s:(string) Format:(resource.Format)BinarySI}`},
		{"0", `(resource.Quantity){` + noInt + ` ` + noDec + ` s:(string)0 Format:(resource.Format)DecimalSI}`},
	} {
		q, err := stdresource.ParseQuantity(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := printer.Sprintf("%#v", From(q)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	if got, want := printer.Sprintf("%#v", From(stdresource.Quantity{})), `(resource.Quantity){`+noInt+` `+noDec+` s:(string) Format:(resource.Format)}`; got != want {
		t.Errorf("zero Quantity:\n got %s\nwant %s", got, want)
	}
}

// The cached string is copied as it is: String() fills it.
func TestFromCachedString(t *testing.T) {
	q := stdresource.MustParse("1.5Gi")
	_ = q.String()
	want := `(resource.Quantity){` + noInt + ` d:(resource.infDecAmount){Dec:(*inf.Dec){unscaled:(big.Int){neg:(bool)false abs:(big.nat)[0x165a0bc000000000]} scale:(inf.Scale)9}} s:(string)1536Mi Format:(resource.Format)BinarySI}`
	if got := printer.Sprintf("%#v", From(q)); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

// From must not fill q's caches: its dump afterwards is unchanged.
func TestFromReadsOnly(t *testing.T) {
	q := stdresource.MustParse("1.5Gi")
	before := printer.Sprintf("%#v", q)
	From(q)
	From(q)
	if after := printer.Sprintf("%#v", q); after != before {
		t.Errorf("q changed:\n%s\n%s", before, after)
	}
}

func BenchmarkFrom(b *testing.B) {
	q := stdresource.MustParse("1.5Gi")
	for i := 0; i < b.N; i++ {
		From(q)
	}
}
