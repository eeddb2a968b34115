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
  <testcase name="[k8s.io] Container Runtime Conformance Test should report termination message [Conformance]" classname="E2eNode Suite" time="10.1">
    <failure type="Failure">k8s.io/kubernetes/test/e2e_node/runtime_conformance_test.go:213&#xA;Expected&#xA;    &lt;string&gt;: DONE&#xA;to equal&#xA;    &lt;string&gt;: DONE</failure>
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
	if len(results) != 5 {
		t.Fatalf("read %d results, want 5", len(results))
	}
	s := Summarize("e2e_node 1.9.11", "1.9.11", "patched", results, func(name string) bool { return strings.Contains(name, "[Conformance]") })
	if s.Specs != 4 || s.Passed != 1 || s.Failed != 2 || s.Skipped != 1 {
		t.Errorf("summary %+v, want 4 specs: 1 passed, 2 failed, 1 skipped", s)
	}
	if len(s.Failures) != 2 || !strings.HasPrefix(s.Failures[0].Name, "[k8s.io] Container Runtime") || !strings.HasPrefix(s.Failures[1].Name, "[k8s.io] Downward API") {
		t.Fatalf("failures %+v", s.Failures)
	}
	// The reason is the failure's text, from the message attribute or,
	// as ginkgo v1 writes it, the element's body.
	if !strings.Contains(s.Failures[0].Reason, "to equal") || !strings.Contains(s.Failures[1].Reason, "to be true") {
		t.Errorf("reasons %q, %q", s.Failures[0].Reason, s.Failures[1].Reason)
	}
	if _, err := ReadJUnit(t.TempDir()); err == nil {
		t.Error("a directory without a report was read as an empty run")
	}
}
