package main

import (
	"k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// container is this release's core/v1 Container (cmd/podhash/main.go is
// shared by every release).
type container = v1.Container

func setFeatureGates(gates string) error { return utilfeature.DefaultMutableFeatureGate.Set(gates) }
