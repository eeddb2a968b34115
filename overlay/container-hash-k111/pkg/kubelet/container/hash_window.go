package container

import (
	"k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/container/legacyhash"
)

// ContainerHashAccepted returns HashContainer(container) and whether hash,
// stored on a running container by this or another kubelet of 1.11 to
// 1.18, is the hash of container as that kubelet computes it: only then is
// the container unchanged (see legacyhash).
func ContainerHashAccepted(container *v1.Container, hash uint64) (uint64, bool) {
	return legacyhash.Compare(container, hash)
}
