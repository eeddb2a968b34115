package config

import (
	"fmt"

	"k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	api "k8s.io/kubernetes/pkg/apis/core"
)

// DecodeStaticPod decodes one pod manifest exactly as the kubelet's file
// source decodes a static pod: the release's own decoding, defaulting,
// static pod name and UID, and validation. parsed with an error means the
// manifest decoded but the kubelet would refuse the pod (defaulting or
// validation failed). Added for the toolchain's container hash preflight
// (cmd/podhash); the kubelet never calls it.
func DecodeStaticPod(data []byte, source string, nodeName types.NodeName) (pod *v1.Pod, parsed bool, err error) {
	parsed, pod, err = tryDecodeSinglePod(data, func(pod *api.Pod) error {
		return applyDefaults(pod, source, true, nodeName)
	})
	if !parsed && err == nil {
		err = fmt.Errorf("not a pod")
	}
	return pod, parsed, err
}

// keptUIDs lists the UIDs a fixes series keeps a running pod under (its
// own first), and says why one of them may not be reproduced. From 1.21
// the UIDs hash the manifest's path and the node name (kubernetes#87461).
var keptUIDs func(pod *api.Pod, source string, nodeName types.NodeName) (uids []string, caveat string)

// StaticPodUIDsOf says, for a static pod manifest without metadata.uid,
// what other builds derive next to this one's own UID: nothing for the
// release built by a newer Go (its official Go already has Go 1.26's
// time.Time layout, so newerGo and dump stay empty), the UIDs a fixes series keeps a running
// pod under, and why the official binary's UID may differ (caveat); for
// the manifest at source on node nodeName. For cmd/podhash; the kubelet
// never calls it. (Plain results, no new type: the vanilla kubelet's
// bytes stay those of the release.)
func StaticPodUIDsOf(data []byte, source string, nodeName types.NodeName) (newerGo, dump string, kept []string, caveat string) {
	tryDecodeSinglePod(data, func(pod *api.Pod) error {
		if pod.UID == "" {
			caveat = officialLocationCaveat(pod)
			if keptUIDs != nil {
				var c string
				kept, c = keptUIDs(pod, source, nodeName)
				caveat = joinCaveats(caveat, c)
			}
		}
		return nil
	})
	return
}

// officialLocationCaveat: a manifest that sets creationTimestamp decodes
// to local time, and the UID's dump then holds the node's *time.Location,
// whose unexported fields changed after the official build's Go (a later
// Go added Location.extend).
func officialLocationCaveat(pod *api.Pod) string {
	if pod.CreationTimestamp.IsZero() {
		return ""
	}
	return "metadata.creationTimestamp is set: the official binary (built by an older Go) hashes the node's time zone in that Go's time.Location layout, which this build does not reproduce"
}

func joinCaveats(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}
