// Package glibc reads the glibc symbol versions a binary needs as the
// dynamic loader does (the ELF version needs, DT_VERNEED: what objdump -T
// shows), and checks them against a floor: a binary needing GLIBC_2.34
// does not start on CentOS 7's glibc 2.17, whatever it does.
package glibc

import (
	"debug/elf"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Needs returns the glibc versions (2.3.2, without GLIBC_) binary's
// version needs name, oldest first; none for a static binary.
func Needs(binary string) ([]string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	needs, err := f.DynamicVersionNeeds()
	if err != nil {
		if f.Section(".gnu.version_r") == nil {
			return nil, nil // nothing versioned: static, or no glibc
		}
		return nil, fmt.Errorf("%s: reading its version needs: %w", binary, err)
	}
	var out []string
	for _, n := range needs {
		for _, d := range n.Needs {
			if v, ok := strings.CutPrefix(d.Dep, "GLIBC_"); ok && !slices.Contains(out, v) && versionRE.MatchString(v) {
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, Compare)
	return out, nil
}

// Newest is the newest glibc version binary needs ("" for none).
func Newest(binary string) (string, error) {
	needs, err := Needs(binary)
	if err != nil || len(needs) == 0 {
		return "", err
	}
	return needs[len(needs)-1], nil
}

// CheckFloor fails, naming each version, when binary needs a glibc symbol
// version newer than floor.
func CheckFloor(binary, floor string) error {
	needs, err := Needs(binary)
	if err != nil {
		return err
	}
	var over []string
	for _, v := range needs {
		if Compare(v, floor) > 0 {
			over = append(over, "GLIBC_"+v)
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("%s needs %s: it would not start on a glibc older than that; the floor is %s", binary, strings.Join(over, ", "), floor)
	}
	return nil
}

var (
	versionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)
	numRE     = regexp.MustCompile(`[0-9]+`)
)

// Compare orders glibc versions numerically: 2.3.2 < 2.17 < 2.34.
func Compare(a, b string) int {
	as, bs := numRE.FindAllString(a, -1), numRE.FindAllString(b, -1)
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x - y
		}
	}
	return len(as) - len(bs)
}
