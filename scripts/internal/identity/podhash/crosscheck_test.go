package podhash

import (
	"path/filepath"
	"slices"
	"testing"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// A shard cross-checks a patched kubelet that carries a window's fix
// against the whole window: 1.20.15 derives as 1.19.16 does, so its
// neighbours alone show no static pod replaced, yet it keeps 1.13..1.18's
// UIDs (a shard failed on exactly that).
func TestCheckedWithCoversTheWindow(t *testing.T) {
	root, _ := filepath.Abs("../../../..")
	m, err := matrix.Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	// The container hash road (1.7..1.18: 1.7.16 stands in).
	hashRoad := []string{"1.7.5", "1.8.15", "1.9.11", "1.10.13", "1.11.10", "1.12.10", "1.13.12", "1.14.10", "1.15.12", "1.16.15", "1.17.17", "1.18.6"}
	for only, want := range map[string][]string{
		// The road's UIDs (1.13..1.20), 1.13.12's UID baseline, the neighbour after.
		"1.20.15": {"1.12.10", "1.13.12", "1.14.10", "1.15.12", "1.16.15", "1.17.17", "1.18.6", "1.19.16", "1.20.15", "1.21.14"},
		// 1.20 .. 1.23's UIDs, which hold its neighbours.
		"1.22.17": {"1.20.15", "1.21.14", "1.22.17", "1.23.17"},
		// The container hash road, which holds 1.7..1.12's UIDs.
		"1.11.10": hashRoad,
		"1.10.13": hashRoad,
		// The UID window 1.7..1.12 (k19-fixes knows 1.10..1.12's).
		"1.9.11": {"1.7.5", "1.8.15", "1.9.11", "1.10.13", "1.11.10", "1.12.10"},
	} {
		set := checkedWith(m, []string{only})
		var got []string // in the matrix's order
		for _, r := range m.Releases {
			if slices.Contains(set, r.Release) {
				got = append(got, r.Release)
			}
		}
		if !slices.Equal(got, want) || len(set) != len(got) {
			t.Errorf("checkedWith(%s) = %v, want %v", only, got, want)
		}
	}
}
