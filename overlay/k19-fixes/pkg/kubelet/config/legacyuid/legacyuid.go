// Package legacyuid lists the UIDs the kubelets an operator switches from
// derive for a static pod without metadata.uid, so that a switch to this
// release keeps the pod (package staticuid picks the one the node runs).
//
// applyDefaults (pkg/kubelet/config/common.go) sets such a pod's UID to
// the md5 of a go-spew dump of the decoded *internal* pod. 1.7's internal
// type is api.Pod (pkg/api); 1.9's is core.Pod (pkg/apis/core) with more
// fields, so the dump, and the UID, of every such pod changes and the
// kubelet kills the pod and starts it again under the new UID. Here the
// pod is projected onto 1.7's internal Pod type graph (generated from the
// 1.7 tree, overlay legacy-types) and dumped under 1.7's type and package
// names: once with go1.8.3's runtime layouts (the official 1.7 binary:
// every manifest's creationTimestamp is a time.Time), once with this Go's
// (1.7 built by Go >= 1.9); and the same for 1.8's graph (package
// staticuid, Go183Derivations). A node switched back from 1.10, 1.11 or
// 1.12 runs their UIDs: the pod projected onto their graphs (overlays
// static-pod-uid-graphs-k19 and legacy-types) gives those too.
package legacyuid

import (
	"crypto/md5"
	"encoding/hex"
	"hash"
	"reflect"

	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
	v110 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v110/core"
	v111 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v111/core"
	v112 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v112/core"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
)

// Newer are the releases after 1.9 whose UIDs a running pod keeps here,
// by their internal Pod graphs; a new pod never gets one.
var Newer = []struct {
	Name string
	Pod  reflect.Type
}{
	{"1.10", reflect.TypeOf(v110.Pod{})},
	{"1.11", reflect.TypeOf(v111.Pod{})},
	{"1.12", reflect.TypeOf(v112.Pod{})},
}

// Derivations returns the UIDs known kubelets derive for pod (decoded,
// before applyDefaults), the UID baseline's official binary first, then
// this release's own and the newer ones'; duplicates dropped. Without a
// 1.7 baseline this release's own comes first.
func Derivations(pod *api.Pod) []staticuid.Derivation {
	var ds []staticuid.Derivation
	if staticuid.Baseline() == "1.7" {
		// Official 1.7 and 1.8 (go1.8.3) and both rebuilt by a newer Go.
		ds = staticuid.Go183Derivations(pod, "1.7", "1.8")
	}
	// Official 1.9.11 (go1.9.3) derives the same for every manifest whose
	// creationTimestamp is unset or null; see docs/go-fidelity.md.
	ds = append(ds, staticuid.Derivation{Name: "1.9", UID: uid(NativeHashPod, pod)})
	for _, r := range Newer {
		t := r.Pod
		ds = append(ds, staticuid.Derivation{Name: r.Name, UID: uid(func(h hash.Hash, pod *api.Pod) {
			// Projected (fields 1.9 lacks stay unset, as 1.9 decoded
			// the manifest) and passed as a pointer, as applyDefaults does.
			hashutil.DeepHashObject(h, legacytypes.Project(pod, t).Addr().Interface())
		}, pod)})
	}
	return staticuid.Dedup(ds)
}

func uid(hashPod func(hash.Hash, *api.Pod), pod *api.Pod) string {
	h := md5.New()
	hashPod(h, pod)
	return hex.EncodeToString(h.Sum(nil))
}

// NativeHashPod is what the vanilla kubelet of this release hashes.
func NativeHashPod(hasher hash.Hash, pod *api.Pod) {
	hashutil.DeepHashObject(hasher, pod)
}
