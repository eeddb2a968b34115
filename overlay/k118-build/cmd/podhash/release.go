package main

import (
	"k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/kubelet/config"
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

// scheme holds this release's v1 defaulting (what the API server applied).
var scheme = legacyscheme.Scheme

// staticPodUIDs: from 1.21 the UIDs hash the manifest's path and the node
// name (kubernetes#87461).
func staticPodUIDs(data []byte, source string, nodeName types.NodeName) (newerGo, dump string, kept []string, caveat string) {
	return config.StaticPodUIDsOf(data, source, nodeName)
}
