package conformance

import "sort"

// Retries is how many more times a spec whose result differs between
// the variants is run on each.
const Retries = 3

// Variants are the two kubelets a comparison judges, in the order run.
var Variants = []string{"patched", "vanilla"}

// Attempt is one run of the suite on both variants under the same seed.
type Attempt struct {
	Patched, Vanilla []Result
}

// Of is variant's results.
func (a *Attempt) Of(variant string) *[]Result {
	if variant == "patched" {
		return &a.Patched
	}
	return &a.Vanilla
}

// Counts is one variant's full run.
type Counts struct {
	Passed int `json:"passed"`
	Failed int `json:"failed"`
}

// Retried is a spec whose result differed between the variants in the
// full run: how often it passed on each over every run of it.
type Retried struct {
	Spec          string `json:"spec"`
	Runs          int    `json:"runs"`
	PatchedPasses int    `json:"patchedPasses"`
	VanillaPasses int    `json:"vanillaPasses"`
}

// Comparison is compare.json.
type Comparison struct {
	Suite   string `json:"suite"`
	Kubelet string `json:"kubelet"`
	Seed    int64  `json:"seed"`
	// Focus and Skip are the user's selection (the not-judged specs are
	// skipped besides).
	Focus   string `json:"focus"`
	Skip    string `json:"skip"`
	Patched Counts `json:"patched"`
	Vanilla Counts `json:"vanilla"`
	// OnlyFailOnPatched: specs that passed less often on patched than on
	// vanilla over the full run and the retries. Not empty: a patch broke
	// what upstream's suite checks.
	OnlyFailOnPatched []string `json:"onlyFailOnPatched"`
	OnlyFailOnVanilla []string `json:"onlyFailOnVanilla"`
	// Flaky: results differed, but each variant passed as often.
	Flaky   []string  `json:"flaky"`
	Retried []Retried `json:"retried"`
	// CommonFailures failed on both variants in the full run; a
	// knownFailure is listed in the kubelet release's file with its reason.
	CommonFailures []Failure `json:"commonFailures"`
	// Unexplained are common failures no known-failures entry explains.
	Unexplained []string `json:"unexplained"`
	// KnownButPassed are known failures that did not fail on both
	// variants: the entry is out of date (or the failure flaky).
	KnownButPassed []string `json:"knownButPassed"`
	WallTime       string   `json:"wallTime"`
}

// Differing lists the selected specs that passed on one variant and
// failed on the other.
func Differing(a Attempt, selected func(string) bool) []string {
	v := outcomes(a.Vanilla)
	var out []string
	for _, r := range a.Patched {
		if !selected(r.Name) || !judged(r.Outcome) || !judged(v[r.Name]) {
			continue
		}
		if r.Outcome != v[r.Name] {
			out = append(out, r.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Compare judges the full run (attempts[0]) and the retries of the specs
// that differed in it (attempts[1:]).
func Compare(suite, kubelet string, seed int64, attempts []Attempt, selected func(string) bool, e *Expected) *Comparison {
	full := attempts[0]
	c := &Comparison{Suite: suite, Kubelet: kubelet, Seed: seed,
		OnlyFailOnPatched: []string{}, OnlyFailOnVanilla: []string{}, Flaky: []string{},
		Retried: []Retried{}, CommonFailures: []Failure{}, Unexplained: []string{}, KnownButPassed: []string{}}
	c.Patched, c.Vanilla = Count(full.Patched, selected), Count(full.Vanilla, selected)

	type outcomePair struct{ patched, vanilla map[string]string }
	runs := make([]outcomePair, len(attempts))
	for i, a := range attempts {
		runs[i] = outcomePair{outcomes(a.Patched), outcomes(a.Vanilla)}
	}
	for _, spec := range Differing(full, selected) {
		r := Retried{Spec: spec}
		for _, run := range runs {
			p, v := run.patched[spec], run.vanilla[spec]
			if !judged(p) || !judged(v) {
				continue // not run in this attempt
			}
			r.Runs++
			if p == "passed" {
				r.PatchedPasses++
			}
			if v == "passed" {
				r.VanillaPasses++
			}
		}
		c.Retried = append(c.Retried, r)
		switch {
		case r.PatchedPasses < r.VanillaPasses:
			c.OnlyFailOnPatched = append(c.OnlyFailOnPatched, spec)
		case r.VanillaPasses < r.PatchedPasses:
			c.OnlyFailOnVanilla = append(c.OnlyFailOnVanilla, spec)
		default:
			c.Flaky = append(c.Flaky, spec)
		}
	}

	failedOnBoth := map[string]bool{}
	for _, r := range full.Patched {
		if !selected(r.Name) || r.Outcome != "failed" || runs[0].vanilla[r.Name] != "failed" {
			continue
		}
		failedOnBoth[r.Name] = true
		f := Failure{Name: r.Name, Reason: r.Message}
		if en, ok := e.KnownFailure(r.Name); ok {
			f.KnownFailure, f.Reason = true, en.Reason
		} else {
			c.Unexplained = append(c.Unexplained, r.Name)
		}
		c.CommonFailures = append(c.CommonFailures, f)
	}
	for _, en := range e.KnownFailures {
		if selected(en.Spec) && !failedOnBoth[en.Spec] {
			c.KnownButPassed = append(c.KnownButPassed, en.Spec)
		}
	}
	return c
}

// MarkKnown sets knownFailure on a single run's failures listed in e.
func MarkKnown(s *Summary, e *Expected) {
	for i := range s.Failures {
		_, s.Failures[i].KnownFailure = e.KnownFailure(s.Failures[i].Name)
	}
}

// Unknown counts the failures not marked known.
func (s *Summary) Unknown() int {
	n := 0
	for _, f := range s.Failures {
		if !f.KnownFailure {
			n++
		}
	}
	return n
}

// Count counts the selected specs that ran, by outcome.
func Count(results []Result, selected func(string) bool) Counts {
	var c Counts
	for _, r := range results {
		if !selected(r.Name) {
			continue
		}
		switch r.Outcome {
		case "passed":
			c.Passed++
		case "failed":
			c.Failed++
		}
	}
	return c
}

func outcomes(results []Result) map[string]string {
	m := map[string]string{}
	for _, r := range results {
		m[r.Name] = r.Outcome
	}
	return m
}

func judged(outcome string) bool { return outcome == "passed" || outcome == "failed" }
