package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/api"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// derivedUID is the UID of a static pod without metadata.uid: among the
// UIDs known 1.7 kubelets derive for it, the one its sandbox already runs
// with on this node, else the official binary's.
func derivedUID(pod *api.Pod, nodeName types.NodeName) types.UID {
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return types.UID(staticuid.Pick(ns, generatePodName(pod.Name, nodeName), derivations(pod)).UID)
}

// derivations are the UIDs known 1.7 kubelets derive for pod, the official
// binary's first.
func derivations(pod *api.Pod) []staticuid.Derivation {
	return staticuid.Dedup([]staticuid.Derivation{
		{Name: "official 1.7 (go1.8.3)", UID: uidOf(officialHashPod, pod)},
		{Name: "1.7 built by Go >= 1.9", UID: uidOf(newerGoHashPod, pod)},
	})
}

// The preflight (cmd/podhash) reports every UID this build keeps.
func init() {
	keptUIDs = func(pod *api.Pod) ([]string, string) { return staticuid.UIDs(derivations(pod)), "" }
}
