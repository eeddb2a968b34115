package time

import (
	"fmt"
	"os"
	"sync"
	stdtime "time"
)

// Location is go1.8.3's time.Location (Go 1.26 adds an extend field
// between tx and cacheStart).
type Location struct {
	name string
	zone []zone
	tx   []zoneTrans

	// The zone in effect in [cacheStart, cacheEnd), unix seconds: go1.8.3
	// filled it for the moment it loaded the zone.
	cacheStart int64
	cacheEnd   int64
	cacheZone  *zone
}

// zone is go1.8.3's time.zone.
type zone struct {
	name   string
	offset int
	isDST  bool
}

// zoneTrans is go1.8.3's time.zoneTrans.
type zoneTrans struct {
	when         int64
	index        uint8
	isstd, isutc bool
}

const (
	alpha = -1 << 63  // the beginning of time, as go1.8.3 writes it
	omega = 1<<63 - 1 // the end of time
)

// zoneDirs are the places go1.8.3 looks for TZ=name on Linux, in order,
// each joined to the name with another "/". Its fourth place,
// $GOROOT/lib/time/zoneinfo.zip with the GOROOT of the machine that built
// it, does not exist on nodes and is left out. A variable for tests.
var zoneDirs = []string{
	"/usr/share/zoneinfo/",
	"/usr/share/lib/zoneinfo/",
	"/usr/lib/locale/TZ/",
}

// go183Released is go1.8.3's release day (2017-05-24 00:00 UTC), unix
// seconds: no go1.8.3-built program started before it.
const go183Released = 1495584000

// localInfo is go1.8.3's Local as this process rebuilt it, and where from.
type localInfo struct {
	loc    *Location
	source string // what was read, for LocalReproducible's reason
	// crash is set when go1.8.3 would have panicked building Local (a
	// TZif with neither time types nor transitions); loc is then UTC.
	crash string
}

var (
	localOnce sync.Once
	localVal  *localInfo
)

// local builds go1.8.3's Local once, like go1.8.3 did on first use of
// Local (in a kubelet, at start: glog formats its first line's time in
// Local): the cache fields are chosen for this moment.
func local() *localInfo {
	localOnce.Do(func() {
		tz, set := os.LookupEnv("TZ")
		localVal = loadLocal(tz, set, "/etc/localtime", stdtime.Now())
	})
	return localVal
}

// loadLocal builds Local as go1.8.3's initLocal does on Linux, with the
// environment, the /etc/localtime path and the clock passed in. Unlike Go
// 1.26, go1.8.3 takes TZ only as a name under zoneDirs (no ":" prefix, no
// absolute path) and does not consult ZONEINFO for Local.
func loadLocal(tz string, tzSet bool, localtime string, now stdtime.Time) *localInfo {
	sec := now.Unix()
	switch {
	case !tzSet:
		if buf, err := os.ReadFile(localtime); err == nil {
			l, err := loadZoneData(buf, sec)
			if err == nil {
				l.name = "Local"
				return &localInfo{loc: l, source: localtime}
			}
			if err == errCrash {
				return crashed(localtime)
			}
		}
	case tz != "" && tz != "UTC":
		for _, dir := range zoneDirs {
			path := dir + "/" + tz
			buf, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			l, err := loadZoneData(buf, sec)
			if err == errCrash {
				return crashed(path)
			}
			if err == nil {
				l.name = tz
				return &localInfo{loc: l, source: "TZ=" + tz + " (" + path + ")"}
			}
		}
	}
	// Unset TZ with /etc/localtime unusable, TZ "" or "UTC", or a TZ
	// name not found: a Location with only its name.
	return &localInfo{loc: &Location{name: "UTC"}, source: "UTC"}
}

func crashed(path string) *localInfo {
	return &localInfo{
		loc:    &Location{name: "UTC"},
		source: path,
		crash:  path + " has no time types and no transitions: go1.8.3 panics loading it",
	}
}

// LocalReproducible says whether the dump of go1.8.3's Local rebuilt here
// is the one an official go1.8.3-built program printed whenever it was
// started: true with no zone tables (TZ empty or UTC, nothing readable)
// and when the cached zone is the same for every start time (one zone for
// all time, as for Etc/UTC or a TZif whose version-1 block has no
// transitions; or the last transition is before go1.8.3 existed, as for
// Asia/Shanghai). Otherwise false, and why: go1.8.3 cached the zone in
// effect when the program first used Local, so a start in another period
// (DST) printed other cacheStart/cacheEnd/cacheZone values.
func LocalReproducible() (bool, string) {
	return local().reproducible()
}

func (li *localInfo) reproducible() (bool, string) {
	if li.crash != "" {
		return false, li.crash
	}
	l := li.loc
	if len(l.zone) == 0 {
		return true, ""
	}
	// cacheEnd omega: the cache holds the last transition (or the fake one
	// at alpha), which every start after it chooses.
	if l.cacheZone != nil && l.cacheEnd == omega && l.cacheStart <= go183Released {
		return true, ""
	}
	last := l.tx[len(l.tx)-1].when
	return false, fmt.Sprintf("zone %q from %s has transitions until %s: go1.8.3 cached the zone in effect when the program first used Local",
		l.name, li.source, stdtime.Unix(last, 0).UTC().Format("2006-01-02"))
}
