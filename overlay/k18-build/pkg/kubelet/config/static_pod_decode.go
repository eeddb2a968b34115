package config

import (
	"bytes"
	"fmt"

	"k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/api"
	go18time "k8s.io/kubernetes/pkg/kubelet/legacytypes/go18/time"
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
// own first), and says why one of them may not be reproduced.
var keptUIDs func(pod *api.Pod) (uids []string, caveat string)

// StaticPodUIDsOf says, for a static pod manifest without metadata.uid,
// what other builds derive next to this one's own UID: the UID this
// release built by Go >= 1.9 without the build series' restoring patch
// derives (newerGo: distribution rebuilds) and the go-spew text it hashes (dump), the UIDs a fixes series
// keeps a running pod under, and why the official binary's UID may differ
// (caveat). For cmd/podhash; the kubelet never calls it.
func StaticPodUIDsOf(data []byte) (newerGo, dump string, kept []string, caveat string) {
	tryDecodeSinglePod(data, func(pod *api.Pod) error {
		if pod.UID != "" {
			return nil
		}
		// As decoded: applyDefaults hashes the pod before it changes it.
		var d dumpRecorder
		newerGoHashPod(&d, pod)
		newerGo, dump = uidOf(newerGoHashPod, pod), d.String()
		if keptUIDs != nil {
			kept, caveat = keptUIDs(pod)
		}
		if !pod.CreationTimestamp.IsZero() && caveat == "" {
			caveat = localCaveat()
		}
		return nil
	})
	return
}

// dumpRecorder is a hash.Hash that keeps what is written to it: the text
// hashutil.DeepHashObject hashes.
type dumpRecorder struct{ bytes.Buffer }

func (d *dumpRecorder) Sum(b []byte) []byte { return append(b, d.Bytes()...) }
func (d *dumpRecorder) Size() int           { return d.Len() }
func (d *dumpRecorder) BlockSize() int      { return 1 }

// localCaveat: a manifest that sets creationTimestamp decodes to local
// time, and the UID's dump holds the time zone (go1.8.3's Local).
func localCaveat() string {
	c := "metadata.creationTimestamp is set: the UID depends on the node's time zone (TZ, /etc/localtime), taken here from this machine's"
	if ok, why := go18time.LocalReproducible(); !ok {
		c += "; the official go1.8.3 binary hashed it as it found it at start: " + why
	}
	return c
}
