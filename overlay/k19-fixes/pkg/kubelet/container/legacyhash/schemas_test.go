package legacyhash

import "k8s.io/api/core/v1"

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
