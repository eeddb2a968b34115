package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/config/legacyuid"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"

	go18time "k8s.io/kubernetes/pkg/kubelet/legacytypes/go18/time"
)

// derivedUID is the UID of a static pod without metadata.uid: among the
// UIDs known kubelets derive for it (legacyuid), the one its sandbox
// already runs with on this node, else the UID baseline's official one.
func derivedUID(pod *api.Pod, nodeName types.NodeName) types.UID {
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return types.UID(staticuid.Pick(ns, generatePodName(pod.Name, nodeName), legacyuid.Derivations(pod)).UID)
}

// The preflight (cmd/podhash) reports every UID this build keeps, and
// whether the official 1.7 UID it derives for a new pod holds everywhere.
func init() {
	keptUIDs = func(pod *api.Pod) ([]string, string) {
		caveat := ""
		if staticuid.Baseline() == "1.7" && !pod.CreationTimestamp.IsZero() {
			caveat = "the official 1.7 UID depends on the node's time zone, taken here from this machine's"
			if ok, why := go18time.LocalReproducible(); !ok {
				caveat += "; the official 1.7 binary (go1.8.3) hashed it as it found it at start: " + why
			}
		}
		return staticuid.UIDs(legacyuid.Derivations(pod)), caveat
	}
}
