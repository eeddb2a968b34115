package conformance

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Result is one spec's outcome as the suite's JUnit report gives it.
type Result struct {
	Name    string
	Outcome string // passed, failed, skipped
	Message string
}

type junitSuite struct {
	Cases []struct {
		Name    string `xml:"name,attr"`
		Skipped *struct {
			Message string `xml:"message,attr"`
		} `xml:"skipped"`
		Failure *struct {
			Message string `xml:"message,attr"`
			Body    string `xml:",chardata"`
		} `xml:"failure"`
	} `xml:"testcase"`
}

// ReadJUnit reads every junit_*.xml the suite wrote into dir, sorted by
// spec name.
func ReadJUnit(dir string) ([]Result, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "junit_*.xml"))
	if len(files) == 0 {
		return nil, fmt.Errorf("the suite wrote no junit_*.xml into %s", dir)
	}
	var out []Result
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var s junitSuite
		if err := xml.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, c := range s.Cases {
			r := Result{Name: strings.TrimSpace(c.Name), Outcome: "passed"}
			switch {
			case c.Failure != nil:
				// Ginkgo v1 puts the failure in the element's text
				// (location, message, location) and no message attribute.
				r.Outcome, r.Message = "failed", strings.TrimSpace(c.Failure.Message)
				if r.Message == "" {
					r.Message = strings.TrimSpace(c.Failure.Body)
				}
			case c.Skipped != nil:
				r.Outcome, r.Message = "skipped", c.Skipped.Message
			}
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
