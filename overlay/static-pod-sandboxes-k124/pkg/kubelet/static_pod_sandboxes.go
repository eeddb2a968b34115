package kubelet

import (
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// recordStaticPodSandboxes lists the node's pod sandboxes once, before the
// static pod sources start, so each static pod keeps the UID its sandbox
// runs with (pkg/kubelet/config derivedUID). From 1.24 the kubelet has no
// Docker client: it asks its CRI runtime (1.23.17's dockershim served on
// its own, or any other), which PreInitRuntimeService has dialled by now.
// Bounded: a hung runtime must not hold up the start.
func recordStaticPodSandboxes(deps *Dependencies) {
	rs := deps.RemoteRuntimeService
	if rs == nil {
		return
	}
	n, err := staticuid.RecordSandboxes(func() ([]staticuid.Sandbox, error) {
		list, err := rs.ListPodSandbox(nil)
		out := make([]staticuid.Sandbox, 0, len(list))
		for _, s := range list {
			if s.Metadata == nil {
				continue
			}
			out = append(out, staticuid.Sandbox{UID: s.Metadata.Uid, Name: s.Metadata.Name, Namespace: s.Metadata.Namespace,
				Running: s.State == runtimeapi.PodSandboxState_SANDBOX_READY, Created: s.CreatedAt / int64(time.Second)})
		}
		return out, err
	}, 10*time.Second)
	if err != nil {
		klog.InfoS("Static pods without metadata.uid: could not list pod sandboxes: each gets this release's own UID, a pod running under another is replaced", "err", err)
		return
	}
	klog.InfoS("Static pods without metadata.uid keep the UID of any of the pod sandboxes found", "sandboxes", n)
}
