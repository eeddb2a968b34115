package main

import kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"

// With the window's hashes, a stored hash is accepted when it is the hash
// any kubelet of 1.7 to 1.18 computes, as kuberuntime does.
func init() {
	accepts = func(c *container, stored uint64) bool {
		_, ok := kubecontainer.ContainerHashAccepted(c, stored)
		return ok
	}
}
