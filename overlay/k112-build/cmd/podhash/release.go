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

// defaultAllowPrivileged is the 1.12 to 1.14 kubelets' --allow-privileged default.
const defaultAllowPrivileged = true

// setFeatureGates sets the gates through the default gate's Set, which
// 1.12 and 1.13 export on FeatureGate and 1.14 only on its mutable view
// (DefaultMutableFeatureGate, the same value).
func setFeatureGates(gates string) error {
	return utilfeature.DefaultFeatureGate.(interface{ Set(string) error }).Set(gates)
}

// scheme holds this release's v1 defaulting (what the API server applied).
var scheme = legacyscheme.Scheme

// staticPodUIDs: this release's UIDs do not depend on the manifest's path
// or the node name (they do from 1.21, kubernetes#87461).
func staticPodUIDs(data []byte, _ string, _ types.NodeName) (newerGo, dump string, kept []string, caveat string) {
	return config.StaticPodUIDsOf(data)
}
