package kubelet

import (
	"time"

	dockertypes "github.com/docker/docker/api/types"
	"k8s.io/klog"
	"k8s.io/kubernetes/pkg/kubelet/dockershim/libdocker"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// The road's copy of overlay static-pod-sandboxes (1.8.15, 1.9.11): the
// same but for logging through klog; 1.13 to 1.18 vendor no glog.
//
// recordStaticPodSandboxes lists the node's pod sandboxes once, before the
// static pod sources start, so each static pod keeps the UID its sandbox
// runs with (pkg/kubelet/config derivedUID). Bounded: a hung Docker must
// not hold up the start (issue 2's failure), and the runtime's own
// initialisation reports it anyway.
func recordStaticPodSandboxes(client libdocker.Interface) {
	n, err := staticuid.RecordContainers(func() ([]staticuid.Container, error) {
		cs, err := client.ListContainers(dockertypes.ContainerListOptions{All: true})
		out := make([]staticuid.Container, 0, len(cs))
		for _, c := range cs {
			out = append(out, staticuid.Container{Labels: c.Labels, State: c.State, Created: c.Created})
		}
		return out, err
	}, 10*time.Second)
	if err != nil {
		klog.Warningf("Static pods without metadata.uid: could not list pod sandboxes (%v): each gets its official derivation, a pod running under another is replaced", err)
		return
	}
	klog.Infof("Static pods without metadata.uid keep the UID of any of the %d pod sandboxes found", n)
}
