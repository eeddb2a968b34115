package dockershim

// What the shared inspect deadline tests (series inspect-deadline-tests)
// need that differs between releases' dockershim: as 1.7 and 1.8 have it.

import (
	"time"

	"k8s.io/kubernetes/pkg/kubelet/dockershim/libdocker"
)

func setRunningContainer(fake *libdocker.FakeDockerClient, id, name string) {
	fake.SetFakeRunningContainers([]*libdocker.FakeContainer{{ID: id, Name: name}})
}

func containerStatus(ds *dockerService, id string) error {
	_, err := ds.ContainerStatus(id)
	return err
}

func podSandboxStatus(ds *dockerService, id string) error {
	_, err := ds.PodSandboxStatus(id)
	return err
}

func startContainer(ds *dockerService, id string) error { return ds.StartContainer(id) }

func connectToDocker(endpoint string, requestTimeout time.Duration) libdocker.Interface {
	return libdocker.ConnectToDockerOrDie(endpoint, requestTimeout, 0)
}
