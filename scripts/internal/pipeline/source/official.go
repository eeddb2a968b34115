package source

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// golangSh is where upstream's build decides tags and cgo per binary.
const golangSh = "hack/lib/golang.sh"

// OfficialBuild is how a tree's own release build (hack/lib/golang.sh, as
// `make release` runs it: no GOFLAGS, no KUBE_CGO_OVERRIDES) builds its
// binaries.
type OfficialBuild struct {
	// Tags are passed to every binary (gotags; 1.18: selinux).
	Tags []string
	// Static are the binaries built with CGO_ENABLED=0
	// (KUBE_STATIC_LIBRARIES less the overrides' default); every other
	// binary is built with cgo.
	Static []string
}

// CGO reports whether the official build links binary with cgo.
func (b OfficialBuild) CGO(binary string) bool { return !slices.Contains(b.Static, binary) }

var (
	staticRE = regexp.MustCompile(`(?s)readonly KUBE_STATIC_LIBRARIES=\((.*?)\)`)
	// KUBE_CGO_OVERRIDES and KUBE_STATIC_OVERRIDES name binaries moved to
	// cgo (to static) when set; their defaults are what `make release`
	// uses. Read into the same name in 1.12..1.18, into <name>_LIST in 1.23.
	overridesRE       = regexp.MustCompile(`read -ra KUBE_CGO_OVERRIDES(?:_LIST)? <<< "\$\{KUBE_CGO_OVERRIDES:-([^}]*)\}"`)
	staticOverridesRE = regexp.MustCompile(`read -ra KUBE_STATIC_OVERRIDES(?:_LIST)? <<< "\$\{KUBE_STATIC_OVERRIDES:-([^}]*)\}"`)
	gotagsRE          = regexp.MustCompile(`(?m)^\s*gotags="([^"$]*)`)
	tagsFlagRE        = regexp.MustCompile(`-tags[ =]("[^"]*"|\S+)`)
)

// ReadOfficialBuild reads the official build's tags and static binaries
// from a tree. It fails on any -tags it does not know, rather than guess:
// a new form in a new release must be read by hand first.
func ReadOfficialBuild(tree string) (OfficialBuild, error) {
	data, err := os.ReadFile(filepath.Join(tree, golangSh))
	if err != nil {
		return OfficialBuild{}, err
	}
	return parseOfficialBuild(string(data))
}

func parseOfficialBuild(sh string) (OfficialBuild, error) {
	var b OfficialBuild
	m := staticRE.FindStringSubmatch(sh)
	if m == nil {
		return b, fmt.Errorf("%s: no KUBE_STATIC_LIBRARIES list", golangSh)
	}
	for _, line := range strings.Split(m[1], "\n") {
		if line, _, _ = strings.Cut(line, "#"); strings.TrimSpace(line) != "" {
			b.Static = append(b.Static, strings.Fields(line)...)
		}
	}
	if strings.Contains(sh, "KUBE_CGO_OVERRIDES") {
		o := overridesRE.FindStringSubmatch(sh)
		if o == nil {
			return b, fmt.Errorf("%s: KUBE_CGO_OVERRIDES is set in a form this reader does not know", golangSh)
		}
		b.Static = slices.DeleteFunc(b.Static, func(s string) bool { return slices.Contains(strings.Fields(o[1]), s) })
	}
	// Up to 1.9 KUBE_STATIC_OVERRIDES is only read from the environment
	// (no default: empty in `make release`); a default in another form is
	// refused.
	if o := staticOverridesRE.FindStringSubmatch(sh); o != nil {
		b.Static = append(b.Static, strings.Fields(o[1])...)
	} else if strings.Contains(sh, "KUBE_STATIC_OVERRIDES=") || strings.Contains(sh, "KUBE_STATIC_OVERRIDES:-") {
		return b, fmt.Errorf("%s: KUBE_STATIC_OVERRIDES is set in a form this reader does not know", golangSh)
	}
	usesGotags := false
	for _, line := range strings.Split(sh, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") || gotagsRE.MatchString(line) {
			continue // comments; gotags' own line reads -tags= out of GOFLAGS
		}
		for _, f := range tagsFlagRE.FindAllStringSubmatch(line, -1) {
			switch f[1] {
			case `"${gotags:-}"`:
				usesGotags = true
			case "coverage": // go test -c of coverage builds only (KUBE_BUILD_WITH_COVERAGE)
			default:
				return b, fmt.Errorf("%s: -tags %s: a form this reader does not know", golangSh, f[1])
			}
		}
	}
	g := gotagsRE.FindAllStringSubmatch(sh, -1)
	switch {
	case usesGotags && len(g) != 1:
		return b, fmt.Errorf("%s: builds with -tags \"${gotags:-}\" but sets gotags %d times", golangSh, len(g))
	case !usesGotags && len(g) > 0:
		return b, fmt.Errorf("%s: sets gotags but builds without them", golangSh)
	case usesGotags:
		for _, t := range strings.Split(g[0][1], ",") {
			if t = strings.TrimSpace(t); t != "" {
				b.Tags = append(b.Tags, t)
			}
		}
	}
	return b, nil
}
