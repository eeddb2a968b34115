//go:build !dockerless
// +build !dockerless

package kubelet

import (
	"time"

	dockertypes "github.com/docker/docker/api/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/dockershim/libdocker"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// The modules era's copy of overlay static-pod-sandboxes (1.8.15, 1.9.11):
// the same listing, through klog/v2 and the Docker client of
// kubeDeps.DockerOptions (nil when the runtime is remote: nothing to list).
//
// recordStaticPodSandboxes lists the node's pod sandboxes once, before the
// static pod sources start, so each static pod keeps the UID its sandbox
// runs with (pkg/kubelet/config derivedUID). Bounded: a hung Docker must
// not hold up the start (the inspect-deadline fix's failure), and the
// runtime's own initialisation reports it anyway.
func recordStaticPodSandboxes(deps *Dependencies) {
	opts := deps.DockerOptions
	if opts == nil {
		return
	}
	client := libdocker.ConnectToDockerOrDie(opts.DockerEndpoint, opts.RuntimeRequestTimeout, opts.ImagePullProgressDeadline)
	n, err := staticuid.RecordContainers(func() ([]staticuid.Container, error) {
		cs, err := client.ListContainers(dockertypes.ContainerListOptions{All: true})
		out := make([]staticuid.Container, 0, len(cs))
		for _, c := range cs {
			out = append(out, staticuid.Container{Labels: c.Labels, State: c.State, Created: c.Created})
		}
		return out, err
	}, 10*time.Second)
	if err != nil {
		klog.Warningf("Static pods without metadata.uid: could not list pod sandboxes (%v): each gets this release's own UID, a pod running under another is replaced", err)
		return
	}
	klog.Infof("Static pods without metadata.uid keep the UID of any of the %d pod sandboxes found", n)
}
