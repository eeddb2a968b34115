package time

import "errors"

var (
	errBadData = errors.New("malformed time zone information")
	// errCrash: go1.8.3 indexes zone[0] for its fake transition without
	// checking there is one, and panics.
	errCrash = errors.New("TZif data without time types or transitions")
)

// loadZoneData reads TZif data as go1.8.3's loadZoneData does, with now
// (unix seconds) standing for its clock:
//
//   - only the header and the version-1 (32-bit) block: the version-2+
//     header and 64-bit block and the footer TZ string are ignored, so
//     transitions stop at 2037 and zones whose v1 block is empty ("slim"
//     files) have none. The version byte must be 0, '2' or '3'.
//   - leap seconds are skipped; isstd/isutc are given to transition i from
//     the i-th indicator (although TZif indicators are per time type).
//   - with no transitions, one fake transition at alpha to zone 0.
//   - the cache is the transition in effect at now (the last one that
//     matches), left empty when now is before the first transition.
func loadZoneData(b []byte, now int64) (*Location, error) {
	r := reader{b: b}
	if string(r.next(4)) != "TZif" {
		return nil, errBadData
	}
	if h := r.next(16); len(h) != 16 || h[0] != 0 && h[0] != '2' && h[0] != '3' {
		return nil, errBadData
	}
	// The six counts in file order.
	var isutcN, isstdN, leapN, timeN, typeN, charN int
	for _, n := range []*int{&isutcN, &isstdN, &leapN, &timeN, &typeN, &charN} {
		*n = int(r.u32())
	}
	when := reader{b: r.next(timeN * 4)}
	idx := r.next(timeN)
	types := reader{b: r.next(typeN * 6)}
	abbrev := r.next(charN)
	r.next(leapN * 8)
	isstd := r.next(isstdN)
	isutc := r.next(isutcN)
	if r.short {
		return nil, errBadData
	}

	zones := make([]zone, typeN)
	for i := range zones {
		zones[i].offset = int(int32(types.u32()))
		zones[i].isDST = types.next(1)[0] != 0
		a := int(types.next(1)[0])
		if a >= len(abbrev) {
			return nil, errBadData
		}
		zones[i].name = cstring(abbrev[a:])
	}

	tx := make([]zoneTrans, timeN)
	for i := range tx {
		tx[i].when = int64(int32(when.u32()))
		if int(idx[i]) >= len(zones) {
			return nil, errBadData
		}
		tx[i].index = idx[i]
		if i < len(isstd) {
			tx[i].isstd = isstd[i] != 0
		}
		if i < len(isutc) {
			tx[i].isutc = isutc[i] != 0
		}
	}
	if len(tx) == 0 {
		if len(zones) == 0 {
			return nil, errCrash
		}
		tx = []zoneTrans{{when: alpha, index: 0}}
	}

	l := &Location{zone: zones, tx: tx}
	for i := range tx {
		if tx[i].when <= now && (i+1 == len(tx) || now < tx[i+1].when) {
			l.cacheStart = tx[i].when
			l.cacheEnd = omega
			if i+1 < len(tx) {
				l.cacheEnd = tx[i+1].when
			}
			l.cacheZone = &l.zone[tx[i].index]
		}
	}
	return l, nil
}

// reader hands out consecutive pieces of b; asking for more than is left
// sets short and empties it.
type reader struct {
	b     []byte
	short bool
}

func (r *reader) next(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.b, r.short = nil, true
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u32() uint32 {
	p := r.next(4)
	if p == nil {
		return 0
	}
	return uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
}

// cstring is p up to its first NUL.
func cstring(p []byte) string {
	for i, c := range p {
		if c == 0 {
			return string(p[:i])
		}
	}
	return string(p)
}
