package main

import (
	"k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api"
	_ "k8s.io/kubernetes/pkg/api/install"
)

// container and pod are this release's core/v1 types (cmd/podhash/main.go
// is shared by every release).
type (
	container = v1.Container
	pod       = v1.Pod
)

// defaultAllowPrivileged is the 1.8 kubelet's --allow-privileged default.
const defaultAllowPrivileged = false

func setFeatureGates(gates string) error { return utilfeature.DefaultFeatureGate.Set(gates) }

// scheme holds this release's v1 defaulting (what the API server applied).
var scheme = api.Scheme
