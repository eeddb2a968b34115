package docker

// What the shared inspect deadline tests (series inspect-deadline-tests)
// need that differs between releases' cadvisor: as 1.14 has it (v0.33.1:
// 1.18's dockerTimeout and SetTimeout, the watcher still in manager/).

import (
	"time"

	dockerclient "github.com/docker/docker/client"
	"github.com/google/cadvisor/container"
	containerlibcontainer "github.com/google/cadvisor/container/libcontainer"
	"github.com/google/cadvisor/manager/watcher"
)

type testDockerClient = dockerclient.Client

var newTestDockerClient = dockerclient.NewClient

type watchSource = watcher.ContainerWatchSource

const rawWatch = watcher.Raw

// handlerMetrics are the metrics the handlers under test collect.
var handlerMetrics = container.MetricSet{}

// setInspectTimeout sets the deadline of the patched inspects and returns
// how to restore it.
func setInspectTimeout(d time.Duration) (restore func()) {
	old := dockerTimeout
	SetTimeout(d)
	return func() { SetTimeout(old) }
}

// testCgroupSubsystems is newDockerContainerHandler's cgroup argument.
var testCgroupSubsystems = &containerlibcontainer.CgroupSubsystems{}

func (r *rawFactory) NewContainerHandler(name string, _ bool) (container.ContainerHandler, error) {
	r.handled = append(r.handled, name)
	return nil, nil
}

// newContainerHandler runs cadvisor's factory loop on a container in the
// host's namespaces.
func newContainerHandler(name string) (container.ContainerHandler, bool, error) {
	return container.NewContainerHandler(name, rawWatch, true)
}
