package legacyhash

import (
	"testing"

	"k8s.io/api/core/v1"
)

// fieldReportNativeHash is what vanilla 1.9 writes for the field report's
// container (measured with a real kubelet).
const fieldReportNativeHash = 1428860573

// releaseCorpus adds the fields 1.9 added to the Container graph.
func releaseCorpus() map[string]*v1.Container {
	return map[string]*v1.Container{
		"1.9-only volumeDevices": {Name: "block", Image: "busybox", VolumeDevices: []v1.VolumeDevice{{Name: "blk", DevicePath: "/dev/xvda"}}},
		"empty volumeDevices":    {Name: "block0", Image: "busybox", VolumeDevices: []v1.VolumeDevice{}},
	}
}

// setReleaseOnlyFields sets what 1.9 added and 1.7 never saw.
func setReleaseOnlyFields(c *v1.Container) {
	c.VolumeDevices = []v1.VolumeDevice{{Name: "d", DevicePath: "/dev/d"}}
}

// What vanilla 1.10.13 writes for the field report's container, and for it
// with a securityContext (runAsUser 1000), measured with its own
// cmd/podhash: 1.10's RunAsGroup changes the second only. Both are kept
// when a node goes back from 1.10 to this kubelet.
func TestAcceptsThe110Hashes(t *testing.T) {
	plain := fieldReport()
	secured := fieldReport()
	uid := int64(1000)
	secured.SecurityContext = &v1.SecurityContext{RunAsUser: &uid}
	for _, tc := range []struct {
		what    string
		c       *v1.Container
		stored  uint64
		as19Too bool
	}{
		{"the field report's container", plain, 1428860573, true},
		{"with a securityContext", secured, 2727791915, false},
	} {
		if got := mustHashAs(t, tc.c, "1.10"); got != tc.stored {
			t.Errorf("%s: 1.10 hash %d, vanilla 1.10.13 writes %d", tc.what, got, tc.stored)
		}
		if same := NativeHash(tc.c) == tc.stored; same != tc.as19Too {
			t.Errorf("%s: 1.9's hash %d is 1.10's %d: %v, want %v", tc.what, NativeHash(tc.c), tc.stored, same, tc.as19Too)
		}
		if !Accepts(tc.c, tc.stored) {
			t.Errorf("%s: 1.10.13's hash %d is not accepted: a switch back from 1.10 recreates it", tc.what, tc.stored)
		}
	}
}
