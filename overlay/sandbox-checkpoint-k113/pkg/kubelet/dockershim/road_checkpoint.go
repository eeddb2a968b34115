package dockershim

import (
	"encoding/json"

	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager/checksum"
	checkpoint113 "k8s.io/kubernetes/pkg/kubelet/dockershim/checkpoint113"
	checkpoint114 "k8s.io/kubernetes/pkg/kubelet/dockershim/checkpoint114"
)

// roadChecksum says whether cs is the checksum the dockershim of 1.13 or
// of 1.14..1.18 computes for the checkpoint file blob: each decodes the
// file into its own CheckpointData (1.13's drops host_ip) and checksums
// the go-spew dump of it, and 1.14's PortMapping.HostIP changed the dump
// of every checkpoint with a port, so each found the other's corrupt and
// removed it.
func roadChecksum(cs checksum.Checksum, blob []byte) bool {
	var v113 struct {
		Data *checkpoint113.CheckpointData `json:"data,omitempty"`
	}
	var v114 struct {
		Data *checkpoint114.CheckpointData `json:"data,omitempty"`
	}
	if json.Unmarshal(blob, &v113) != nil || json.Unmarshal(blob, &v114) != nil || v113.Data == nil || v114.Data == nil {
		return false
	}
	return cs.Verify(*v113.Data) == nil || cs.Verify(*v114.Data) == nil
}
