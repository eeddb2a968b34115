package kubelet

import (
	"time"

	dockertypes "github.com/docker/docker/api/types"
	"github.com/golang/glog"
	"k8s.io/kubernetes/pkg/kubelet/dockershim/libdocker"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// Shared by the 1.8.15, 1.9.11, 1.11.10 and 1.12.10 fixes (glog; 1.7's
// libdocker takes engine-api's types, so 1.7.5 keeps its own copy).
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
		glog.Warningf("Static pods without metadata.uid: could not list pod sandboxes (%v): each gets its official derivation, a pod running under another is replaced", err)
		return
	}
	glog.Infof("Static pods without metadata.uid keep the UID of any of the %d pod sandboxes found", n)
}
