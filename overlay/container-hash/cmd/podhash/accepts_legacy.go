package main

import kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"

// With the legacy-compatible hash, a stored hash is accepted under any
// schema from the baseline release up to this one, as kuberuntime does for
// containers other kubelets created.
func init() {
	accepts = func(c *container, stored uint64) bool {
		_, ok := kubecontainer.ContainerHashAccepted(c, stored)
		return ok
	}
}
