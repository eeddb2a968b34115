package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/api"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"

	go18time "k8s.io/kubernetes/pkg/kubelet/legacytypes/go18/time"
)

// derivedUID is the UID of a static pod without metadata.uid: among the
// UIDs known kubelets derive for it (derivations), the one its sandbox
// already runs with on this node, else the UID baseline's official one.
func derivedUID(pod *api.Pod, nodeName types.NodeName) types.UID {
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return types.UID(staticuid.Pick(ns, generatePodName(pod.Name, nodeName), derivations(pod)).UID)
}

// derivations are the UIDs known kubelets derive for pod: with a 1.7 UID
// baseline (versions.yaml uidBaseline), official 1.7 first and 1.7
// rebuilt by a newer Go (staticuid's projections); then 1.8's own, as
// this tree derives it (official, k18-build 0002) and as it derives it
// built by a newer Go without that patch.
func derivations(pod *api.Pod) []staticuid.Derivation {
	var ds []staticuid.Derivation
	if staticuid.Baseline() == "1.7" {
		ds = staticuid.Go183Derivations(pod, "1.7")
	}
	ds = append(ds,
		staticuid.Derivation{Name: "official 1.8 (go1.8.3)", UID: uidOf(officialHashPod, pod)},
		staticuid.Derivation{Name: "1.8 built by Go >= 1.9", UID: uidOf(newerGoHashPod, pod)})
	return staticuid.Dedup(ds)
}

// The preflight (cmd/podhash) reports every UID this build keeps, and
// whether the official UID it derives for a new pod holds everywhere.
func init() {
	keptUIDs = func(pod *api.Pod) ([]string, string) {
		caveat := ""
		if !pod.CreationTimestamp.IsZero() {
			caveat = "the official go1.8.3-built UID depends on the node's time zone, taken here from this machine's"
			if ok, why := go18time.LocalReproducible(); !ok {
				caveat += "; the official binary hashed it as it found it at start: " + why
			}
		}
		return staticuid.UIDs(derivations(pod)), caveat
	}
}
