package config

import (
	"fmt"
	"testing"
)

// The window is 1.7 .. 1.12: a node keeps a static pod under the UID the
// kubelet that started it derived, whichever of those it was (patched
// 1.9.11 gives new pods the official 1.7 binary's), so every one of them
// must be known here, not only those the list names (the road's tests
// check the releases it lists).
func TestWindowKnowsEveryReleaseOf17To112(t *testing.T) {
	v := readVanilla(t)
	seen := map[int]bool{}
	for release := range v.UIDs {
		var minor int
		if _, err := fmt.Sscanf(release, "1.%d.", &minor); err != nil {
			t.Fatalf("%s: release %q: %v", vanillaUIDs, release, err)
		}
		if minor < 7 || minor > 12 {
			continue
		}
		seen[minor] = true
		if !known(release) {
			t.Errorf("vanilla %s's UIDs are not kept: a switch from it replaces every static pod without metadata.uid", release)
		}
	}
	for minor := 7; minor <= 12; minor++ {
		if !seen[minor] {
			t.Errorf("%s: no 1.%d release", vanillaUIDs, minor)
		}
	}
}
