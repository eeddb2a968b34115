// Package legacyuid derives a static pod's UID as the hash baseline's
// kubelet (1.7) derives it, so switching a node's kubelet between 1.7 and
// this release keeps static pods that have no metadata.uid.
//
// applyDefaults (pkg/kubelet/config/common.go) sets such a pod's UID to
// the md5 of a go-spew dump of the decoded *internal* pod. 1.7's internal
// type is api.Pod (pkg/api); 1.9's is core.Pod (pkg/apis/core) with more
// fields, so the dump, and the UID, of every such pod changes and the
// kubelet kills the pod and starts it again under the new UID. Here the
// pod is projected onto 1.7's internal Pod type graph (generated from the
// 1.7 tree, v17/api) and dumped under 1.7's type and package names.
package legacyuid

import (
	"hash"
	"reflect"

	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/kubelet/container/legacyhash"
	hashutil "k8s.io/kubernetes/pkg/util/hash"

	v17 "k8s.io/kubernetes/pkg/kubelet/config/legacyuid/v17/api"
)

var v17Pod = reflect.TypeOf(v17.Pod{})

// DeepHashPod writes what the baseline kubelet's applyDefaults hashes for
// pod into hasher (reset first, as hashutil.DeepHashObject does). With a
// baseline that is not 1.7 (the only compiled-in internal Pod graph) it
// hashes pod as this release does.
func DeepHashPod(hasher hash.Hash, pod *api.Pod) {
	if legacyhash.Baseline() != "1.7" {
		hashutil.DeepHashObject(hasher, pod)
		return
	}
	// A pointer, as applyDefaults passes it: spew prints "(*api.Pod)".
	hashutil.DeepHashObject(hasher, legacyhash.Project(pod, v17Pod).Addr().Interface())
}

// NativeHashPod is what the vanilla kubelet of this release hashes.
func NativeHashPod(hasher hash.Hash, pod *api.Pod) {
	hashutil.DeepHashObject(hasher, pod)
}
