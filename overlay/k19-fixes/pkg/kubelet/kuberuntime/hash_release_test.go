package kuberuntime

import "k8s.io/api/core/v1"

// storedByOthers are the field report container's hashes other kubelets
// stored: 1.7's, and vanilla 1.9's (measured with real kubelets).
var storedByOthers = map[string]uint64{"1.7": 1559107639, "1.9": 1428860573}

// releaseOnlyEdits are edits to fields only 1.9 has.
var releaseOnlyEdits = map[string]func(c *v1.Container){
	"volumeDevices added": func(c *v1.Container) {
		c.VolumeDevices = []v1.VolumeDevice{{Name: "d", DevicePath: "/dev/xvda"}}
	},
}
