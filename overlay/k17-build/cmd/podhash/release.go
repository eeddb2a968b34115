package main

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/v1"
)

// container is this release's core/v1 Container (cmd/podhash/main.go is
// shared by every release).
type container = v1.Container

func setFeatureGates(gates string) error { return utilfeature.DefaultFeatureGate.Set(gates) }
