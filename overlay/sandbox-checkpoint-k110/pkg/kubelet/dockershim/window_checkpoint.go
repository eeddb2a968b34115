package dockershim

import (
	"encoding/json"
	"hash/fnv"

	checkpoint110 "k8s.io/kubernetes/pkg/kubelet/dockershim/checkpoint110"
	legacycheckpoint "k8s.io/kubernetes/pkg/kubelet/dockershim/legacycheckpoint"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
)

// windowChecksum says whether cs is the checksum the dockershim of 1.7
// (and patched 1.8.15 and 1.9.11, which write 1.7's), of 1.8 to 1.10, or
// of 1.11 to 1.13 computes for the checkpoint file blob, decoded as each
// decodes it: 1.7's decoder drops data.host_network; 1.8 to 1.10 checksum
// the whole checkpoint, 1.11's checkpoint manager the data alone. So each
// found the others' checkpoints corrupt and removed them, and a sandbox
// whose container is gone was never torn down (hostport rules).
func windowChecksum(cs uint64, blob []byte) bool {
	var v17 legacycheckpoint.PodSandboxCheckpoint
	var v110 checkpoint110.PodSandboxCheckpoint
	if json.Unmarshal(blob, &v17) != nil || json.Unmarshal(blob, &v110) != nil {
		return false
	}
	v17.CheckSum, v110.CheckSum = 0, 0
	if cs == fnv32a(v17) || cs == fnv32a(v110) {
		return true
	}
	return v110.Data != nil && cs == fnv32a(*v110.Data)
}

// fnv32a is the checksum every dockershim of 1.7 to 1.13 takes of a value.
func fnv32a(v interface{}) uint64 {
	h := fnv.New32a()
	hashutil.DeepHashObject(h, v)
	return uint64(h.Sum32())
}
