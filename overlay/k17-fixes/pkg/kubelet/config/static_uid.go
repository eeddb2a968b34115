package config

import (
	"github.com/golang/glog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/api"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// derivedUID is the UID of a static pod without metadata.uid: among the
// UIDs known 1.7 kubelets derive for it, the one its sandbox already runs
// with on this node, else the official binary's.
func derivedUID(pod *api.Pod, nodeName types.NodeName) types.UID {
	ds := derivations(pod)
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	d, running := staticuid.Choose(ns, generatePodName(pod.Name, nodeName), ds)
	if len(ds) > 1 {
		how := "runs nowhere yet"
		if running {
			how = "its sandbox runs with it"
		}
		glog.V(2).Infof("Static pod %s/%s: UID %s as %s derives it (%s; %d known derivations)", ns, pod.Name, d.UID, d.Name, how, len(ds))
	}
	return types.UID(d.UID)
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
