package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/config/legacyuid"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// derivedUID is the UID of a static pod without metadata.uid: among the
// UIDs the kubelets of 1.20..1.25 derive for it (legacyuid), the one its
// sandbox already runs with on this node, else this release's own.
func derivedUID(pod *api.Pod, source string, isFile bool, nodeName types.NodeName) types.UID {
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	src := legacyuid.Source{Path: source, IsFile: isFile, Node: nodeName}
	return types.UID(staticuid.Pick(ns, generatePodName(pod.Name, nodeName), legacyuid.Derivations(pod, src)).UID)
}

// The preflight (cmd/podhash) reports every UID this build keeps.
func init() {
	keptUIDs = func(pod *api.Pod, source string, nodeName types.NodeName) ([]string, string) {
		return staticuid.UIDs(legacyuid.Derivations(pod, legacyuid.Source{Path: source, IsFile: true, Node: nodeName})), ""
	}
}
