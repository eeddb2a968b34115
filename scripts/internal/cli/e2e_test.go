package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

func TestReportTargets(t *testing.T) {
	report := `[{"SpecReports": [
	  {"LeafNodeType": "BeforeSuite", "State": "passed"},
	  {"LeafNodeType": "It", "State": "passed", "ContainerHierarchyLabels": [["upgrade", "kubelet:1.7.5", "kubelet:1.9.11"]], "LeafNodeLabels": []},
	  {"LeafNodeType": "It", "State": "passed", "ContainerHierarchyLabels": [["rehearsal"], ["kubelet:1.7.5", "control-plane:1.9.11"]]},
	  {"LeafNodeType": "It", "State": "skipped", "LeafNodeLabels": ["kubelet:1.23.17", "control-plane:1.23.17"]}
	]}]`
	path := filepath.Join(t.TempDir(), "dry-run.json")
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	kubelets, cps, err := reportTargets(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kubelets, []string{"1.7.5", "1.9.11"}) || !slices.Equal(cps, []string{"1.9.11"}) {
		t.Errorf("kubelets %v, control planes %v; want 1.7.5 1.9.11 and 1.9.11 (a spec the run skips builds nothing)", kubelets, cps)
	}
	labels, _ := reportLabels(path)
	if !slices.Contains(labels, "rehearsal") || slices.Contains(labels, "kubelet:1.23.17") {
		t.Errorf("labels %v", labels)
	}
	if err := os.WriteFile(path, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reportTargets(path); err == nil {
		t.Error("a report that is not JSON was read")
	}
}

// E2E_SPECS=release:X,Y is several shards as one run: the specs naming
// any of them, and a release the matrix does not hold is refused by name.
func TestLabelFilterReleases(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	m, err := matrix.Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	one, err := labelFilter(nil, m, "release:1.13.12")
	if err != nil {
		t.Fatal(err)
	}
	if want := "kubelet: containsAny {1.13.12} || control-plane: containsAny {1.13.12}"; one != want {
		t.Errorf("release:1.13.12 is %q, want %q", one, want)
	}
	two, err := labelFilter(nil, m, "release:1.13.12,1.14.10")
	if err != nil {
		t.Fatal(err)
	}
	if want := "kubelet: containsAny {1.13.12, 1.14.10} || control-plane: containsAny {1.13.12, 1.14.10}"; two != want {
		t.Errorf("release:1.13.12,1.14.10 is %q, want %q", two, want)
	}
	if _, err := labelFilter(nil, m, "release:1.13.12,1.99.0"); err == nil || !strings.Contains(err.Error(), "1.99.0") {
		t.Errorf("release:1.13.12,1.99.0: error %v, want one naming 1.99.0", err)
	}
}
