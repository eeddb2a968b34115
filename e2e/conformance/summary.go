package conformance

// Summary is summary.json: what one run of the suite found.
type Summary struct {
	Suite    string    `json:"suite"`
	Kubelet  string    `json:"kubelet"`
	Variant  string    `json:"variant"`
	Specs    int       `json:"specs"`
	Passed   int       `json:"passed"`
	Failed   int       `json:"failed"`
	Skipped  int       `json:"skipped"`
	Failures []Failure `json:"failures"`
}

// Failure is one failed spec.
type Failure struct {
	Name         string `json:"name"`
	KnownFailure bool   `json:"knownFailure"`
	Reason       string `json:"reason"`
}

// Summarize counts the selected specs' results (the JUnit report lists
// every spec of the suite; those outside the focus are skipped there).
func Summarize(suite, kubelet, variant string, results []Result, selected func(name string) bool) *Summary {
	s := &Summary{Suite: suite, Kubelet: kubelet, Variant: variant, Failures: []Failure{}}
	for _, r := range results {
		if !selected(r.Name) {
			continue
		}
		s.Specs++
		switch r.Outcome {
		case "passed":
			s.Passed++
		case "failed":
			s.Failed++
			s.Failures = append(s.Failures, Failure{Name: r.Name, Reason: r.Message})
		default:
			s.Skipped++
		}
	}
	return s
}
