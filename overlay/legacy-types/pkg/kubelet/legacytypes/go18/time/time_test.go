package time

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	stdtime "time"

	"github.com/davecgh/go-spew/spew"
)

// printer is the kubelet's hash printer (pkg/util/hash).
var printer = spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}

func dump(v interface{}) string { return printer.Sprintf("%#v", v) }

// The expected texts below are what go1.8.3's time.Time printed through
// this go-spew: fields sec int64, nsec int32, loc *Location; Location
// {name, zone, tx, cacheStart, cacheEnd, cacheZone}.

const (
	nilLoc = `(*time.Location)<nil>`
	// go1.8.3's Local when it fell back to UTC: only the name.
	utcLoc = `(*time.Location){name:(string)UTC zone:([]time.zone)<nil> tx:([]time.zoneTrans)<nil> cacheStart:(int64)0 cacheEnd:(int64)0 cacheZone:(*time.zone)<nil>}`
)

func mustFrom(t *testing.T, in stdtime.Time) Time {
	t.Helper()
	v, err := From(in)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func check(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func TestZeroTime(t *testing.T) {
	check(t, "zero", dump(mustFrom(t, stdtime.Time{})),
		`(time.Time){sec:(int64)0 nsec:(int32)0 loc:(*time.Location)<nil>}`)
	// As a metav1.Time embeds it, and through a pointer.
	check(t, "embedded", dump(struct{ Time }{mustFrom(t, stdtime.Time{})}),
		`(struct { time.Time }){Time:(time.Time){sec:(int64)0 nsec:(int32)0 loc:(*time.Location)<nil>}}`)
}

func TestUTCInstants(t *testing.T) {
	for _, c := range []struct {
		in   stdtime.Time
		want string
	}{
		// 1504269296 unix + 62135596800 (year 1 to 1970).
		{stdtime.Date(2017, 9, 1, 12, 34, 56, 789000000, stdtime.UTC), `(time.Time){sec:(int64)63639866096 nsec:(int32)789000000 loc:` + nilLoc + `}`},
		{stdtime.Unix(0, 0).UTC(), `(time.Time){sec:(int64)62135596800 nsec:(int32)0 loc:` + nilLoc + `}`},
		{stdtime.Unix(-1, 1).UTC(), `(time.Time){sec:(int64)62135596799 nsec:(int32)1 loc:` + nilLoc + `}`},
		{stdtime.Time{}.Add(1), `(time.Time){sec:(int64)0 nsec:(int32)1 loc:` + nilLoc + `}`},
		// Parsed with "Z".
		{mustParse(t, "2017-09-01T12:34:56Z"), `(time.Time){sec:(int64)63639866096 nsec:(int32)0 loc:` + nilLoc + `}`},
	} {
		check(t, c.in.String(), dump(mustFrom(t, c.in)), c.want)
	}
}

func mustParse(t *testing.T, s string) stdtime.Time {
	v, err := stdtime.Parse(stdtime.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOtherLocation(t *testing.T) {
	v, err := From(stdtime.Date(2017, 9, 1, 12, 34, 56, 0, stdtime.FixedZone("X", 3600)))
	if err == nil {
		t.Fatal("a FixedZone time converted without error")
	}
	check(t, "instant kept", dump(v), `(time.Time){sec:(int64)63639862496 nsec:(int32)0 loc:`+nilLoc+`}`)
}

// useLocal makes li go1.8.3's Local for the test.
func useLocal(t *testing.T, li *localInfo) {
	local() // fire the once now, so that it does not replace li later
	old := localVal
	localVal = li
	t.Cleanup(func() { localVal = old })
}

var (
	dec2017 = stdtime.Date(2017, 12, 1, 0, 0, 0, 0, stdtime.UTC)
	// 2017-12-01 in Local as go1.8.3 held it, up to the location.
	dec2017Local = `(time.Time){sec:(int64)63647683200 nsec:(int32)0 loc:`
)

func TestLocalUTCRules(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	old := zoneDirs
	zoneDirs = []string{dir + "/"}
	t.Cleanup(func() { zoneDirs = old })
	for _, c := range []struct {
		what  string
		tz    string
		tzSet bool
	}{
		{"TZ=UTC", "UTC", true},
		{"TZ empty", "", true},
		{"TZ unset, no /etc/localtime", "", false},
		{"TZ=name not found", "Europe/Nowhere", true},
		// go1.8.3 knows no ":" prefix nor absolute paths.
		{"TZ=:path", ":" + missing, true},
	} {
		li := loadLocal(c.tz, c.tzSet, missing, dec2017)
		useLocal(t, li)
		check(t, c.what, dump(mustFrom(t, dec2017.Local())), dec2017Local+utcLoc+`}`)
		if ok, why := LocalReproducible(); !ok {
			t.Errorf("%s: not reproducible: %s", c.what, why)
		}
	}
}

// tzType is a TZif local time type record.
type tzType struct {
	off   int32
	isDST byte
	abbr  byte
}

// tzBlock is one TZif header and data block (v1: 32-bit times).
type tzBlock struct {
	version      byte
	when         []int64
	idx          []byte
	types        []tzType
	abbrev       string
	leaps        int
	isstd, isutc []byte
}

// bytes writes the block; wide selects 64-bit times and leap records.
func (b tzBlock) bytes(wide bool) []byte {
	var w bytes.Buffer
	w.WriteString("TZif")
	w.WriteByte(b.version)
	w.Write(make([]byte, 15))
	for _, n := range []int{len(b.isutc), len(b.isstd), b.leaps, len(b.when), len(b.types), len(b.abbrev)} {
		binary.Write(&w, binary.BigEndian, uint32(n))
	}
	for _, x := range b.when {
		if wide {
			binary.Write(&w, binary.BigEndian, x)
		} else {
			binary.Write(&w, binary.BigEndian, int32(x))
		}
	}
	w.Write(b.idx)
	for _, ty := range b.types {
		binary.Write(&w, binary.BigEndian, ty.off)
		w.WriteByte(ty.isDST)
		w.WriteByte(ty.abbr)
	}
	w.WriteString(b.abbrev)
	size := 8
	if wide {
		size = 12
	}
	w.Write(make([]byte, b.leaps*size))
	w.Write(b.isstd)
	w.Write(b.isutc)
	return w.Bytes()
}

// file is a version-2 TZif: v1 block, then the 64-bit block and footer.
func file(v1, v2 tzBlock, footer string) []byte {
	return append(append(v1.bytes(false), v2.bytes(true)...), "\n"+footer+"\n"...)
}

func writeFile(t *testing.T, b []byte) string {
	p := filepath.Join(t.TempDir(), "localtime")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A zone that is the same for all time (Etc/UTC as zic writes it "fat").
var etcUTC = tzBlock{version: '2', types: []tzType{{0, 0, 0}}, abbrev: "UTC\x00", isstd: []byte{1}, isutc: []byte{1}}

// Its dump: one zone, go1.8.3's fake transition at alpha (isstd/isutc are
// only set for real transitions), the cache spanning all time.
const etcUTCLoc = `{zone:([]time.zone)[{name:(string)UTC offset:(int)0 isDST:(bool)false}] tx:([]time.zoneTrans)[{when:(int64)-9223372036854775808 index:(uint8)0 isstd:(bool)false isutc:(bool)false}] cacheStart:(int64)-9223372036854775808 cacheEnd:(int64)9223372036854775807 cacheZone:(*time.zone){name:(string)UTC offset:(int)0 isDST:(bool)false}}`

func withName(loc, name string) string {
	return `(*time.Location){name:(string)` + name + ` ` + loc[1:]
}

func TestLocalNoTransitions(t *testing.T) {
	// v1 only (version 0), and v2 with a 64-bit block telling another
	// story that go1.8.3 never reads.
	other := tzBlock{version: '2', when: []int64{-1 << 40}, idx: []byte{0}, types: []tzType{{-3600, 1, 0}}, abbrev: "XXX\x00"}
	for what, b := range map[string][]byte{
		"v1":      func() []byte { v1 := etcUTC; v1.version = 0; return v1.bytes(false) }(),
		"v2":      file(etcUTC, other, "XXX1"),
		"v3 slim": file(tzBlock{version: '3', types: []tzType{{0, 0, 0}}, abbrev: "\x00"}, other, "XXX1"),
	} {
		li := loadLocal("", false, writeFile(t, b), dec2017)
		useLocal(t, li)
		want := etcUTCLoc
		if what == "v3 slim" {
			// zic -b slim leaves one nameless UT type in the v1 block.
			want = strings.Replace(want, "name:(string)UTC", "name:(string)", 2)
		}
		check(t, what, dump(mustFrom(t, dec2017.Local())), dec2017Local+withName(want, "Local")+`}`)
		if ok, why := LocalReproducible(); !ok {
			t.Errorf("%s: not reproducible: %s", what, why)
		}
	}
}

// cet has four transitions (2017-03-26, 2017-10-29, 2018-03-25,
// 2018-10-28 01:00 UTC) and per-type isstd/isutc indicators, which
// go1.8.3 hands to the first transitions instead.
var cet = tzBlock{
	version: '2',
	when:    []int64{1490490000, 1509238800, 1521939600, 1540688400},
	idx:     []byte{1, 0, 1, 0},
	types:   []tzType{{3600, 0, 0}, {7200, 1, 4}},
	abbrev:  "CET\x00CEST\x00",
	leaps:   1,
	isstd:   []byte{1, 0},
	isutc:   []byte{0, 1},
}

const (
	cetTables  = `zone:([]time.zone)[{name:(string)CET offset:(int)3600 isDST:(bool)false} {name:(string)CEST offset:(int)7200 isDST:(bool)true}] tx:([]time.zoneTrans)[{when:(int64)1490490000 index:(uint8)1 isstd:(bool)true isutc:(bool)false} {when:(int64)1509238800 index:(uint8)0 isstd:(bool)false isutc:(bool)true} {when:(int64)1521939600 index:(uint8)1 isstd:(bool)false isutc:(bool)false} {when:(int64)1540688400 index:(uint8)0 isstd:(bool)false isutc:(bool)false}]`
	cetZone    = `(*time.zone){name:(string)CET offset:(int)3600 isDST:(bool)false}`
	cestZone   = `(*time.zone){name:(string)CEST offset:(int)7200 isDST:(bool)true}`
	omegaField = `cacheEnd:(int64)9223372036854775807`
)

func TestLocalTransitions(t *testing.T) {
	path := writeFile(t, file(cet, tzBlock{version: '2', types: []tzType{{0, 0, 0}}, abbrev: "XXX\x00"}, "CET-1CEST,M3.5.0,M10.5.0/3"))
	for _, c := range []struct {
		now   stdtime.Time
		cache string
	}{
		{dec2017, `cacheStart:(int64)1509238800 cacheEnd:(int64)1521939600 cacheZone:` + cetZone},
		{stdtime.Date(2018, 7, 1, 0, 0, 0, 0, stdtime.UTC), `cacheStart:(int64)1521939600 cacheEnd:(int64)1540688400 cacheZone:` + cestZone},
		// On a transition: the new zone.
		{stdtime.Unix(1521939600, 0), `cacheStart:(int64)1521939600 cacheEnd:(int64)1540688400 cacheZone:` + cestZone},
		// After the last: until omega.
		{stdtime.Date(2019, 1, 1, 0, 0, 0, 0, stdtime.UTC), `cacheStart:(int64)1540688400 ` + omegaField + ` cacheZone:` + cetZone},
		// Before the first: no cache.
		{stdtime.Date(2017, 1, 1, 0, 0, 0, 0, stdtime.UTC), `cacheStart:(int64)0 cacheEnd:(int64)0 cacheZone:(*time.zone)<nil>`},
	} {
		li := loadLocal("", false, path, c.now)
		useLocal(t, li)
		check(t, c.now.String(), dump(mustFrom(t, dec2017.Local())),
			dec2017Local+`(*time.Location){name:(string)Local `+cetTables+` `+c.cache+`}}`)
		ok, why := LocalReproducible()
		if ok || !strings.Contains(why, `"Local"`) || !strings.Contains(why, path) {
			t.Errorf("%s: reproducible %v, %q; want false naming the zone", c.now, ok, why)
		}
	}
}

// go1.8.3 does not stop at the first transition in effect: with
// transitions out of order, the last one that matches is cached.
func TestLocalUnsortedTransitions(t *testing.T) {
	b := tzBlock{version: '2', when: []int64{100, 300, 50}, idx: []byte{0, 1, 1}, types: []tzType{{0, 0, 0}, {3600, 1, 2}}, abbrev: "A\x00B\x00"}
	li := loadLocal("", false, writeFile(t, b.bytes(false)), stdtime.Unix(200, 0))
	useLocal(t, li)
	check(t, "cache", dump(mustFrom(t, dec2017.Local())), dec2017Local+
		`(*time.Location){name:(string)Local zone:([]time.zone)[{name:(string)A offset:(int)0 isDST:(bool)false} {name:(string)B offset:(int)3600 isDST:(bool)true}] tx:([]time.zoneTrans)[{when:(int64)100 index:(uint8)0 isstd:(bool)false isutc:(bool)false} {when:(int64)300 index:(uint8)1 isstd:(bool)false isutc:(bool)false} {when:(int64)50 index:(uint8)1 isstd:(bool)false isutc:(bool)false}] cacheStart:(int64)50 `+omegaField+` cacheZone:(*time.zone){name:(string)B offset:(int)3600 isDST:(bool)true}}}`)
}

func TestLocalLastTransitionBeforeGo183(t *testing.T) {
	// Asia/Shanghai's v1 block ends with 1991-09-14 15:00 UTC (CST).
	old := tzBlock{
		version: '2',
		when:    []int64{671558400, 684860400},
		idx:     []byte{1, 0},
		types:   []tzType{{28800, 0, 0}, {32400, 1, 4}},
		abbrev:  "CST\x00CDT\x00",
	}
	li := loadLocal("", false, writeFile(t, old.bytes(false)), dec2017)
	useLocal(t, li)
	check(t, "cache", dump(mustFrom(t, dec2017.Local())), dec2017Local+
		`(*time.Location){name:(string)Local zone:([]time.zone)[{name:(string)CST offset:(int)28800 isDST:(bool)false} {name:(string)CDT offset:(int)32400 isDST:(bool)true}] tx:([]time.zoneTrans)[{when:(int64)671558400 index:(uint8)1 isstd:(bool)false isutc:(bool)false} {when:(int64)684860400 index:(uint8)0 isstd:(bool)false isutc:(bool)false}] cacheStart:(int64)684860400 `+omegaField+` cacheZone:(*time.zone){name:(string)CST offset:(int)28800 isDST:(bool)false}}}`)
	if ok, why := LocalReproducible(); !ok {
		t.Errorf("not reproducible: %s", why)
	}
}

func TestLocalTZName(t *testing.T) {
	// go1.8.3 tries each directory; one whose file is malformed is
	// skipped like a missing one.
	base := t.TempDir()
	var dirs []string
	for i, content := range [][]byte{nil, []byte("TZif-garbage"), etcUTC.bytes(false)} {
		d := filepath.Join(base, string(rune('a'+i)))
		dirs = append(dirs, d+"/")
		if content == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Join(d, "Etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "Etc", "UTC"), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := zoneDirs
	zoneDirs = dirs
	t.Cleanup(func() { zoneDirs = old })

	// TZ set wins over /etc/localtime; the Location is named after TZ.
	li := loadLocal("Etc/UTC", true, writeFile(t, cet.bytes(false)), dec2017)
	useLocal(t, li)
	check(t, "TZ=Etc/UTC", dump(mustFrom(t, dec2017.Local())), dec2017Local+withName(etcUTCLoc, "Etc/UTC")+`}`)
}

func TestLocalBadData(t *testing.T) {
	v4 := etcUTC
	v4.version = '4' // newer than go1.8.3 accepts
	trunc := cet.bytes(false)
	badIdx := cet
	badIdx.idx = []byte{1, 0, 2, 0}
	badAbbr := etcUTC
	badAbbr.types = []tzType{{0, 0, 4}}
	for what, b := range map[string][]byte{
		"version 4":         v4.bytes(false),
		"truncated":         trunc[:len(trunc)-1],
		"no magic":          []byte("TZjf"),
		"type out of range": badIdx.bytes(false),
		"abbrev past end":   badAbbr.bytes(false),
	} {
		useLocal(t, loadLocal("", false, writeFile(t, b), dec2017))
		check(t, what, dump(mustFrom(t, dec2017.Local())), dec2017Local+utcLoc+`}`)
	}

	// No types and no transitions: go1.8.3 crashed.
	useLocal(t, loadLocal("", false, writeFile(t, tzBlock{}.bytes(false)), dec2017))
	if ok, why := LocalReproducible(); ok || !strings.Contains(why, "panics") {
		t.Errorf("empty TZif: reproducible %v, %q", ok, why)
	}
}

// TestMachineLocal only runs the real path (this machine's TZ and
// /etc/localtime): whatever they hold, it must load and report.
func TestMachineLocal(t *testing.T) {
	ok, why := LocalReproducible()
	t.Logf("machine Local %q: reproducible %v %s", localVal.loc.name, ok, why)
	if _, err := From(stdtime.Now()); err != nil {
		t.Fatal(err)
	}
}
