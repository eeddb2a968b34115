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
