package main

import kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"

// With the legacy-compatible hash, a stored hash is accepted under any
// schema from the baseline release up to this one, as kuberuntime does.
func init() { accepts = kubecontainer.ContainerHashAccepted }
