// Package legacyuid lists the UIDs the kubelets of 1.13 to 1.20 derive for
// a static pod without metadata.uid, so that switching between them keeps
// the pod (package staticuid picks the one the node runs).
//
// applyDefaults (pkg/kubelet/config/common.go) sets such a pod's UID to the
// md5 of a go-spew dump of the decoded internal core.Pod (the node name
// and manifest path it writes first are discarded by the dump's reset
// until 1.21, kubernetes#87461). The internal Pod graph grows at every
// minor but 1.16 -> 1.17 and 1.19 -> 1.20 (1.13 added PodSpec.EnableServiceLinks and
// defaults it to true; the graphs in legacy-types show the rest), and
// go-spew prints every field, set or not: nearly every such pod
// (kubeadm's control plane) gets a new UID at each switch, and the
// kubelet kills and starts it again. Here the pod is projected onto each
// release's graph (overlay legacy-types v113..v118 and v120, generated
// from that release's tree, with that release's meta/v1: ObjectMeta
// changed at 1.14 and 1.16) and dumped under its type names. The official
// binaries of 1.13 to 1.20 (go1.11.13 .. go1.15.15) lay out times as this
// Go does.
package legacyuid

import (
	"crypto/md5"
	"encoding/hex"
	"hash"
	"reflect"

	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
	v113 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v113/core"
	v114 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v114/core"
	v115 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v115/core"
	v116 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v116/core"
	v118 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v118/core"
	v120 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v120/core"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
)

// Releases are the releases whose derivation every build knows, oldest
// first, by their internal Pod graphs (1.16's is 1.17's, 1.19's 1.20's:
// 1.20 derives as 1.19 does, so the list stops there).
var Releases = []struct {
	Name string
	Pod  reflect.Type
}{
	{"1.13", reflect.TypeOf(v113.Pod{})},
	{"1.14", reflect.TypeOf(v114.Pod{})},
	{"1.15", reflect.TypeOf(v115.Pod{})},
	{"1.16", reflect.TypeOf(v116.Pod{})},
	{"1.18", reflect.TypeOf(v118.Pod{})},
	{"1.19", reflect.TypeOf(v120.Pod{})},
}

// Derivations returns the UIDs the kubelets of 1.13..1.20 derive for pod
// (decoded, before applyDefaults): first what a pod that runs nowhere yet
// gets (the UID baseline's, versions.yaml uidBaseline; unset, this
// release's own), then the others oldest first; duplicates dropped.
func Derivations(pod *api.Pod) []staticuid.Derivation {
	var ds []staticuid.Derivation
	for _, r := range Releases {
		if r.Name == staticuid.Baseline() {
			ds = append(ds, staticuid.Derivation{Name: r.Name, UID: uid(pod, r.Pod)})
		}
	}
	ds = append(ds, staticuid.Derivation{Name: "this release", UID: uid(pod, nil)})
	for _, r := range Releases {
		ds = append(ds, staticuid.Derivation{Name: r.Name, UID: uid(pod, r.Pod)})
	}
	return staticuid.Dedup(ds)
}

// uid is the md5 of the dump of pod projected onto t (nil: this release's
// own graph, as the vanilla kubelet dumps it).
func uid(pod *api.Pod, t reflect.Type) string {
	h := md5.New()
	HashPodAs(h, pod, t)
	return hex.EncodeToString(h.Sum(nil))
}

// HashPodAs dumps pod as the release whose internal Pod graph is t does:
// projected onto t (fields t lacks dropped, as its decoder dropped them),
// as a pointer, as applyDefaults passes it; t nil, as this release does.
func HashPodAs(hasher hash.Hash, pod *api.Pod, t reflect.Type) {
	if t == nil {
		hashutil.DeepHashObject(hasher, pod)
		return
	}
	hashutil.DeepHashObject(hasher, legacytypes.Project(pod, t).Addr().Interface())
}
