package matrix

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestNeighbours(t *testing.T) {
	root, _ := filepath.Abs("../../../..")
	m, err := Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	for only, want := range map[string][]string{
		// 1.9's patched build writes 1.7's hashes and UIDs; 1.8 and 1.10
		// are the releases beside it.
		"1.9.11": {"1.7.5", "1.8.15", "1.9.11", "1.10.13"},
		// The last dockershim release: 1.22 and 1.24 beside it, no baseline.
		"1.23.17": {"1.22.17", "1.23.17", "1.24.17"},
		// The newest: only the one before it.
		"1.25.16": {"1.24.17", "1.25.16"},
		// 1.7 is the baseline of 1.8's and 1.9's patched builds.
		"1.7.5": {"1.7.5", "1.8.15", "1.9.11"},
	} {
		if got := m.Neighbours([]string{only}); !slices.Equal(got, want) {
			t.Errorf("Neighbours(%s) = %v, want %v", only, got, want)
		}
	}
	sub := m.Subset([]string{"1.22.17", "1.23.17"})
	var built []string
	for _, r := range sub.Releases {
		if r.StandIn == "" {
			built = append(built, r.Release)
		}
	}
	if !slices.Equal(built, []string{"1.22.17", "1.23.17"}) {
		t.Errorf("Subset kept %v", built)
	}
}
