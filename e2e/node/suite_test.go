package node

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
)

func TestNode(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Node e2e: kubelet switches, hung inspects, orphaned containers")
}

// suiteLabels are the suites e2e/run.sh selects by label; a spec belongs
// to the first of them among its labels.
var suiteLabels = []string{"tls", "upgrade", "inspect-hang", "orphan", "rehearsal", "rehearsal-1.8"}

// The specs of all selected suites run in one Ginkgo run, side by side on
// parallel processes. On process 1, with every process's specs, this
// writes what each suite would have reported alone: junit-<suite>.xml and
// one line per suite in $E2E_SUMMARY (default summary.txt): passed only if
// some spec ran and none failed or was skipped at run time; wall time from
// its first spec's start to its last one's end, and the specs' own time
// summed; under it, each failed spec's message (on one line, cut at 400
// characters) and location,
// so a run whose log is cut to its tail (CI's excerpt) still says why.
var _ = ReportAfterSuite("a JUnit report and a summary line per suite", func(r Report) {
	out := os.Getenv("E2E_REPORT_DIR")
	if out == "" {
		return
	}
	selected := strings.Fields(os.Getenv("E2E_SUITES"))
	bySuite := map[string][]types.SpecReport{}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		labels := s.Labels()
		for _, l := range suiteLabels {
			if slices.Contains(labels, l) {
				bySuite[l] = append(bySuite[l], s)
				break
			}
		}
	}
	var summary strings.Builder
	for _, suite := range selected {
		var failures []string
		sub := r
		sub.SuiteDescription = r.SuiteDescription + ": " + suite
		sub.SpecReports = nil
		ran, failed, skipped := 0, 0, 0
		var first, last time.Time
		var specTime time.Duration
		for _, s := range bySuite[suite] {
			switch {
			case s.State.Is(types.SpecStateSkipped) && s.Failure.Message == "":
				continue // not selected (E2E_SPECS)
			case s.State.Is(types.SpecStatePending):
				continue
			case s.State.Is(types.SpecStateSkipped):
				skipped++
			case s.State.Is(types.SpecStateFailureStates):
				failed++
				failures = append(failures, fmt.Sprintf("%-14s   %s: %s\n%-14s     %s (%s)", "", s.State, s.FullText(), "", briefly(s.Failure.Message), s.Failure.Location))
			}
			ran++
			sub.SpecReports = append(sub.SpecReports, s)
			specTime += s.RunTime
			if first.IsZero() || s.StartTime.Before(first) {
				first = s.StartTime
			}
			if s.EndTime.After(last) {
				last = s.EndTime
			}
		}
		Expect(reporters.GenerateJUnitReport(sub, filepath.Join(out, "junit-"+suite+".xml"))).To(Succeed())
		verdict := "passed"
		if ran == 0 || failed > 0 || skipped > 0 {
			verdict = "FAILED"
		}
		var wall time.Duration
		if ran > 0 {
			wall = last.Sub(first)
		}
		fmt.Fprintf(&summary, "%-14s %s  %4.0fs  %2d specs, %d failed, %d skipped at run time; specs' own time %.0fs\n",
			suite, verdict, wall.Seconds(), ran, failed, skipped, specTime.Seconds())
		for _, f := range failures {
			summary.WriteString(f + "\n")
		}
	}
	path := os.Getenv("E2E_SUMMARY") // one per Ginkgo run, as e2e/run.sh runs two at once
	if path == "" {
		path = filepath.Join(out, "summary.txt")
	}
	Expect(os.WriteFile(path, []byte(summary.String()), 0o644)).To(Succeed())
})

// briefly is a failure message on one line: Gomega's put the annotation
// first and "Expected <value> to ..." over the lines after it.
func briefly(msg string) string {
	s := strings.Join(strings.Fields(msg), " ")
	if len(s) > 400 {
		s = s[:400] + " ..."
	}
	return s
}
