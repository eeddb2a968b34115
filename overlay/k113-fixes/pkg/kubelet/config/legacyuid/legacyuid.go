// Package legacyuid lists the UIDs the kubelets an operator switches from
// derive for a static pod without metadata.uid, so that a switch to this
// release keeps the pod (package staticuid picks the one the node runs).
//
// applyDefaults (pkg/kubelet/config/common.go) sets such a pod's UID to
// the md5 of a go-spew dump of the decoded internal core.Pod. 1.13 added
// PodSpec.EnableServiceLinks and defaults it to true when decoding, so the
// dump, and the UID, of every such pod differs from 1.12's, and the
// kubelet kills the pod and starts it again under the new UID. Here the
// pod is projected onto 1.12's internal Pod graph (generated from the 1.12
// tree, overlay legacy-types v112) and dumped under 1.12's type and
// package names. The official 1.12 binary (go1.10.8) lays out times as
// this Go does, so one derivation stands for it and for 1.12 built by a
// newer Go (a manifest that sets creationTimestamp aside: the caveat of
// StaticPodUIDsOf).
package legacyuid

import (
	"crypto/md5"
	"encoding/hex"
	"hash"
	"reflect"

	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
	v112 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v112/core"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
)

// Derivations returns the UIDs known kubelets derive for pod (decoded,
// before applyDefaults), the UID baseline's first, this release's own
// last; duplicates dropped. Without the 1.12 baseline only this release's
// own.
func Derivations(pod *api.Pod) []staticuid.Derivation {
	var ds []staticuid.Derivation
	if staticuid.Baseline() == "1.12" {
		ds = append(ds, staticuid.Derivation{Name: "1.12", UID: uid(Hash112Pod, pod)})
	}
	ds = append(ds, staticuid.Derivation{Name: "1.13", UID: uid(NativeHashPod, pod)})
	return staticuid.Dedup(ds)
}

func uid(hashPod func(hash.Hash, *api.Pod), pod *api.Pod) string {
	h := md5.New()
	hashPod(h, pod)
	return hex.EncodeToString(h.Sum(nil))
}

// Hash112Pod is what a 1.12 kubelet hashes: the pod projected onto 1.12's
// graph (fields 1.12 lacks dropped, as its decoder dropped them), as a
// pointer, as applyDefaults passes it.
func Hash112Pod(hasher hash.Hash, pod *api.Pod) {
	hashutil.DeepHashObject(hasher, legacytypes.Project(pod, reflect.TypeOf(v112.Pod{})).Addr().Interface())
}

// NativeHashPod is what the vanilla kubelet of this release hashes.
func NativeHashPod(hasher hash.Hash, pod *api.Pod) {
	hashutil.DeepHashObject(hasher, pod)
}
