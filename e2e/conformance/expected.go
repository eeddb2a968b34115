package conformance

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Entry names one spec, exactly as the suite's JUnit report does, and why
// it is listed.
type Entry struct {
	Spec   string `json:"spec"`
	Reason string `json:"reason"`
}

// Expected is what this machine expects of a suite release judging a
// kubelet release, from files committed under
// e2e/conformance/expected/<suite>/:
//
//   - not-judged.yaml (notJudged): specs that cannot run here (registry
//     pulls, GKE checks), whatever the kubelet; the runner skips them.
//   - kubelet-<release>.yaml (knownFailures): specs found to fail on both
//     variants of that kubelet release, each with the reason found.
type Expected struct {
	NotJudged     []Entry `json:"notJudged"`
	KnownFailures []Entry `json:"knownFailures"`
	// Files are the files read, for messages.
	Files []string `json:"-"`
}

// LoadExpected reads dir/<suite>/not-judged.yaml and
// dir/<suite>/kubelet-<kubelet>.yaml; either may be absent (nothing listed).
func LoadExpected(dir, suite, kubelet string) (*Expected, error) {
	e := &Expected{}
	for _, name := range []string{"not-judged.yaml", "kubelet-" + kubelet + ".yaml"} {
		path := filepath.Join(dir, suite, name)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var part Expected
		if err := yaml.UnmarshalStrict(data, &part); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, en := range append(part.NotJudged, part.KnownFailures...) {
			if strings.TrimSpace(en.Spec) == "" || strings.TrimSpace(en.Reason) == "" {
				return nil, fmt.Errorf("%s: every entry needs a spec and a reason (%q)", path, en.Spec)
			}
		}
		e.NotJudged = append(e.NotJudged, part.NotJudged...)
		e.KnownFailures = append(e.KnownFailures, part.KnownFailures...)
		e.Files = append(e.Files, path)
	}
	return e, nil
}

// SkipPattern is a ginkgo skip regexp matching exactly the not-judged
// specs ("" when there are none).
func (e *Expected) SkipPattern() string {
	return SpecsPattern(specsOf(e.NotJudged))
}

// KnownFailure returns the entry listing spec as a known failure.
func (e *Expected) KnownFailure(spec string) (Entry, bool) {
	for _, en := range e.KnownFailures {
		if en.Spec == spec {
			return en, true
		}
	}
	return Entry{}, false
}

// Stale lists the entries that name no spec of the suite's report: a
// renamed spec or a typo would otherwise hide a failure or skip nothing.
func (e *Expected) Stale(results []Result) []string {
	have := map[string]bool{}
	for _, r := range results {
		have[r.Name] = true
	}
	var stale []string
	for _, en := range append(append([]Entry{}, e.NotJudged...), e.KnownFailures...) {
		if !have[en.Spec] {
			stale = append(stale, en.Spec)
		}
	}
	return stale
}

// SpecsPattern is a ginkgo focus or skip regexp matching exactly these
// specs' names. Ginkgo matches against the spec's full text, which
// carries the JUnit name as a suffix, so each name is anchored at its end.
func SpecsPattern(specs []string) string {
	var alts []string
	for _, s := range specs {
		alts = append(alts, regexp.QuoteMeta(s)+`\s*$`)
	}
	return strings.Join(alts, "|")
}

func specsOf(entries []Entry) []string {
	var out []string
	for _, en := range entries {
		out = append(out, en.Spec)
	}
	return out
}
