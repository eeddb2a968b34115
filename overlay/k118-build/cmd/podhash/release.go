package main

import (
	"encoding/json"

	"k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/capabilities"
)

// container and pod are this release's core/v1 types (cmd/podhash/main.go
// is shared by every release).
type (
	container = v1.Container
	pod       = v1.Pod
)

// defaultAllowPrivileged: 1.18's kubelet has no --allow-privileged (gone
// in 1.15) and always allows privileged containers.
const defaultAllowPrivileged = true

func setFeatureGates(gates string) error { return utilfeature.DefaultMutableFeatureGate.Set(gates) }

func setAllowPrivileged(allow bool) {
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: allow})
}

// decodeAPIPod decodes a pod as this kubelet receives it from the API
// server: into its v1 types (fields it lacks are dropped) with v1
// defaulting, without the static pod path's validation.
func decodeAPIPod(data []byte) (*v1.Pod, error) {
	p := &v1.Pod{}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(p)
	return p, nil
}
