package config

import (
	"k8s.io/apimachinery/pkg/types"
	api "k8s.io/kubernetes/pkg/apis/core"
)

// The preflight (cmd/podhash) reports every UID this build keeps a running
// static pod under (static-pod-uid-k113; until 1.21 the UID hashes neither
// the manifest's path nor the node name, which k118-build's keptUIDs
// takes).
func init() {
	keptUIDs = func(pod *api.Pod, _ string, _ types.NodeName) ([]string, string) { return roadKeptUIDs(pod) }
}
