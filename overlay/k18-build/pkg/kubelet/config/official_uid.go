package config

import (
	"crypto/md5"
	"encoding/hex"
	"hash"
	"reflect"

	"k8s.io/kubernetes/pkg/api"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes"
	hashutil "k8s.io/kubernetes/pkg/util/hash"

	v18official "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/official/api"
)

var officialPod = reflect.TypeOf(v18official.Pod{})

// officialHashPod writes into hasher what the official 1.8 kubelet, built
// with go1.8.3, hashes for a static pod's UID: the pod with its times and
// quantities in go1.8.3's layout (every pod's creationTimestamp is a
// time.Time, and go-spew prints its unexported fields).
func officialHashPod(hasher hash.Hash, pod *api.Pod) {
	// A pointer, as applyDefaults passes it: spew prints "(*api.Pod)".
	hashutil.DeepHashObject(hasher, legacytypes.Project(pod, officialPod).Addr().Interface())
}

// newerGoHashPod is what this tree hashes built by Go >= 1.9 without the
// build series' patch (distribution rebuilds of 1.8 by a newer Go).
func newerGoHashPod(hasher hash.Hash, pod *api.Pod) {
	hashutil.DeepHashObject(hasher, pod)
}

// uidOf is the UID applyDefaults derives when it hashes pod with hashPod.
func uidOf(hashPod func(hash.Hash, *api.Pod), pod *api.Pod) string {
	h := md5.New()
	hashPod(h, pod)
	return hex.EncodeToString(h.Sum(nil))
}
