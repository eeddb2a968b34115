package main

import (
	"k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
)

// container and pod are this release's core/v1 types (cmd/podhash/main.go
// is shared by every release).
type (
	container = v1.Container
	pod       = v1.Pod
)

// defaultAllowPrivileged is the 1.12 and 1.13 kubelets' --allow-privileged default.
const defaultAllowPrivileged = true

func setFeatureGates(gates string) error { return utilfeature.DefaultFeatureGate.Set(gates) }

// scheme holds this release's v1 defaulting (what the API server applied).
var scheme = legacyscheme.Scheme
