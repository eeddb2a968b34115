// Package time holds time values in go1.8.3's runtime layout, so that a
// go-spew dump made under a newer Go prints what official go1.8.3-built
// kubelets (Kubernetes 1.7.x and 1.8.x) printed, and hashed, for a
// time.Time: the static pod UID is the md5 of such a dump. Only the layout
// and the values go1.8.3 would have held are reproduced; there is no time
// arithmetic here.
//
// The package is named time and the type names are go1.8.3's because
// go-spew prints types as "pkgname.TypeName" (time.Time, time.Location,
// time.zone, time.zoneTrans).
package time

import (
	"fmt"
	stdtime "time"
)

// Time is go1.8.3's time.Time: seconds since January 1, year 1 00:00:00
// UTC, nanoseconds, location. Go 1.9 replaced it with {wall, ext, loc}.
type Time struct {
	sec  int64
	nsec int32
	loc  *Location
}

// unixToInternal is the number of seconds from year 1 to 1970 in the
// proleptic Gregorian calendar: go1.8.3 counted sec from year 1.
const unixToInternal int64 = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 86400

// From returns the value a go1.8.3 program holds for t's instant and
// location:
//
//   - UTC (and the zero Time, whose location is UTC): loc nil. Go 1.26 keeps
//     UTC as a nil loc; go1.8.3 did the same (its setLoc turned &utcLoc into
//     nil, "All UTC times are represented with loc==nil").
//   - Local: loc is this package's go1.8.3 Local (see LocalReproducible),
//     as go1.8.3 held &localLoc. The zero instant in Local keeps it too, as
//     in go1.8.3 (time.Time{}.Local()).
//   - anything else (a FixedZone, a loaded Location) has no go1.8.3
//     counterpart here: an error, with the instant kept and loc nil.
func From(t stdtime.Time) (Time, error) {
	// Unix() is t's own seconds since year 1 minus unixToInternal, so this
	// cannot overflow.
	v := Time{sec: t.Unix() + unixToInternal, nsec: int32(t.Nanosecond())}
	switch l := t.Location(); l {
	case stdtime.UTC:
		return v, nil
	case stdtime.Local:
		v.loc = local().loc
		return v, nil
	default:
		return v, fmt.Errorf("go18 time: location %q is neither UTC nor Local", l.String())
	}
}
