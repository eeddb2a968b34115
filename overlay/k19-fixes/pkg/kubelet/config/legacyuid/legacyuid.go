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
// staticuid, Go183Derivations).
package legacyuid

import (
	"crypto/md5"
	"encoding/hex"
	"hash"

	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
)

// Derivations returns the UIDs known kubelets derive for pod (decoded,
// before applyDefaults), the UID baseline's official binary first, this
// release's own last; duplicates dropped. Without a 1.7 baseline only this
// release's own.
func Derivations(pod *api.Pod) []staticuid.Derivation {
	var ds []staticuid.Derivation
	if staticuid.Baseline() == "1.7" {
		// Official 1.7 and 1.8 (go1.8.3) and both rebuilt by a newer Go.
		ds = staticuid.Go183Derivations(pod, "1.7", "1.8")
	}
	// Official 1.9.11 (go1.9.3) derives the same for every manifest whose
	// creationTimestamp is unset or null; see docs/go-fidelity.md.
	ds = append(ds, staticuid.Derivation{Name: "1.9", UID: uid(NativeHashPod, pod)})
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
