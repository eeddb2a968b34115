// Package go18dump rewrites a go-spew dump printed by a kubelet built with
// Go >= 1.9 into the dump the official go1.8.3-built kubelet printed for
// the same value, from the two runtimes' sources (docs/go-fidelity.md).
// It is the oracle of the official-derivation goldens: text rules read from
// go1.8.3's time and math/big and from go-spew's printing, independent of
// the in-tree code (package legacytypes) that reproduces the layout with
// types.
//
// The rules cover what reaches a static pod UID or a container hash:
//
//   - time.Time: Go 1.9 holds {wall uint64; ext int64; loc}, go1.8.3
//     {sec int64; nsec int32; loc}. Without a monotonic reading (decoded
//     times have none) ext is the seconds since January 1, year 1, which is
//     what go1.8.3's sec counted, and wall's low 30 bits are the
//     nanoseconds.
//   - time.Location: a later Go added `extend string` after tx; go1.8.3
//     has no such field. Only a Location without zone tables (TZ empty or
//     UTC) is rewritten: go1.8.3's zone cache depended on when the program
//     started.
//   - big.Word: uint since Go 1.9, uintptr in go1.8.3. go-spew prints a
//     slice's elements without their type, uints in decimal and uintptrs
//     as 0x-hex (<nil> for zero), so a big.nat's words change.
//
// go-spew prints strings without quotes, which is why the rules anchor on
// the field names that follow.
package go18dump

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	timeRE = regexp.MustCompile(`\(time\.Time\)\{wall:\(uint64\)(\d+) ext:\(int64\)(-?\d+) loc:`)
	// A Location with zone tables cannot be rewritten by text.
	zonedRE  = regexp.MustCompile(`zone:\(\[\]time\.zone\)\[`)
	extendRE = regexp.MustCompile(` extend:\(string\) cacheStart:`)
	natRE    = regexp.MustCompile(`\(big\.nat\)\[([0-9 ]*)\]`)
)

const (
	hasMonotonic = 1 << 63
	nsecMask     = 1<<30 - 1
)

// Rewrite returns the go1.8.3 dump of the value whose Go >= 1.9 dump is
// dump, or an error naming what it cannot rewrite.
func Rewrite(dump string) (string, error) {
	if zonedRE.MatchString(dump) {
		return "", fmt.Errorf("go18dump: the dump holds a time.Location with zone tables; go1.8.3's depends on when the program started (rewrite dumps made with TZ=UTC)")
	}
	var err error
	out := timeRE.ReplaceAllStringFunc(dump, func(m string) string {
		g := timeRE.FindStringSubmatch(m)
		wall, e1 := strconv.ParseUint(g[1], 10, 64)
		ext, e2 := strconv.ParseInt(g[2], 10, 64)
		if e1 != nil || e2 != nil {
			err = fmt.Errorf("go18dump: %q: not a time.Time", m)
			return m
		}
		if wall&hasMonotonic != 0 {
			err = fmt.Errorf("go18dump: %q holds a monotonic reading (time.Now), which go1.8.3's Time had no field for", m)
			return m
		}
		return fmt.Sprintf("(time.Time){sec:(int64)%d nsec:(int32)%d loc:", ext, wall&nsecMask)
	})
	if err != nil {
		return "", err
	}
	out = extendRE.ReplaceAllString(out, " cacheStart:")
	out = natRE.ReplaceAllStringFunc(out, func(m string) string {
		words := strings.Fields(natRE.FindStringSubmatch(m)[1])
		for i, s := range words {
			w, perr := strconv.ParseUint(s, 10, 64)
			if perr != nil {
				err = fmt.Errorf("go18dump: %q: not a big.Word", s)
				return m
			}
			if w == 0 {
				words[i] = "<nil>"
			} else {
				words[i] = fmt.Sprintf("0x%x", w)
			}
		}
		return "(big.nat)[" + strings.Join(words, " ") + "]"
	})
	return out, err
}
