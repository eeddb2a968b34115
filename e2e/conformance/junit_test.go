package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The suite's report (ginkgo v1's JUnit reporter) lists every spec: those
// outside the focus as skipped. Only the selected ones are counted.
func TestReadJUnitAndSummarize(t *testing.T) {
	dir := t.TempDir()
	report := `<?xml version="1.0" encoding="UTF-8"?>
<testsuite tests="4" failures="1" errors="0" time="12.5">
  <testcase name="[k8s.io] Pods should get a host IP [Conformance]" classname="E2eNode Suite" time="3.1"></testcase>
  <testcase name="[k8s.io] Downward API should provide pod name [Conformance]" classname="E2eNode Suite" time="4.2">
    <failure type="Failure" message="Expected&#xA;    &lt;bool&gt;: false&#xA;to be true">/go/src/k8s.io/kubernetes/test/e2e/framework/util.go:2280</failure>
  </testcase>
  <testcase name="[k8s.io] GKE system requirements [Conformance] [Feature:GKEEnv] The docker daemon should support AppArmor" classname="E2eNode Suite" time="0"><skipped></skipped></testcase>
  <testcase name="[k8s.io] Density [Serial] create a batch of pods" classname="E2eNode Suite" time="0"><skipped></skipped></testcase>
</testsuite>`
	if err := os.WriteFile(filepath.Join(dir, "junit_patched_01.xml"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	results, err := ReadJUnit(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 4 {
		t.Fatalf("read %d results, want 4", len(results))
	}
	s := Summarize("e2e_node 1.9.11", "1.9.11", "patched", results, func(name string) bool { return strings.Contains(name, "[Conformance]") })
	if s.Specs != 3 || s.Passed != 1 || s.Failed != 1 || s.Skipped != 1 {
		t.Errorf("summary %+v, want 3 specs: 1 passed, 1 failed, 1 skipped", s)
	}
	if len(s.Failures) != 1 || !strings.HasPrefix(s.Failures[0].Name, "[k8s.io] Downward API") || !strings.Contains(s.Failures[0].Reason, "to be true") {
		t.Errorf("failures %+v", s.Failures)
	}
	if _, err := ReadJUnit(t.TempDir()); err == nil {
		t.Error("a directory without a report was read as an empty run")
	}
}
