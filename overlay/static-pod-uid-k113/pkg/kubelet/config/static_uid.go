package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/config/legacyuid"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// derivedUID is the UID of a static pod without metadata.uid: among the
// UIDs the kubelets of 1.13..1.20 derive for it (legacyuid), the one its
// sandbox already runs with on this node, else the UID baseline's or this
// release's own.
func derivedUID(pod *api.Pod, nodeName types.NodeName) types.UID {
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return types.UID(staticuid.Pick(ns, generatePodName(pod.Name, nodeName), legacyuid.Derivations(pod)).UID)
}

// roadKeptUIDs are the UIDs this build keeps a running pod under, for the
// preflight (cmd/podhash): the fixes series' static_uid_kept.go hands it
// to keptUIDs, whose signature differs between the build series.
func roadKeptUIDs(pod *api.Pod) ([]string, string) {
	return staticuid.UIDs(legacyuid.Derivations(pod)), ""
}
