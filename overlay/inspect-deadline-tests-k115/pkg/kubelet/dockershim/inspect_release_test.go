package dockershim

// What the shared inspect deadline tests (series inspect-deadline-tests)
// need that differs between releases' dockershim: as 1.15, 1.16 and 1.17
// have it (1.18's CRI API from k8s.io/cri-api; the client options of
// 1.9 to 1.17).

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1alpha2"
	"k8s.io/kubernetes/pkg/kubelet/dockershim/libdocker"
)

func setRunningContainer(fake *libdocker.FakeDockerClient, id, name string) {
	fake.SetFakeContainers([]*libdocker.FakeContainer{{ID: id, Name: name, Running: true}})
}

func containerStatus(ds *dockerService, id string) error {
	_, err := ds.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
	return err
}

func podSandboxStatus(ds *dockerService, id string) error {
	_, err := ds.PodSandboxStatus(context.Background(), &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	return err
}

func startContainer(ds *dockerService, id string) error {
	_, err := ds.StartContainer(context.Background(), &runtimeapi.StartContainerRequest{ContainerId: id})
	return err
}

func connectToDocker(endpoint string, requestTimeout time.Duration) libdocker.Interface {
	return libdocker.ConnectToDockerOrDie(endpoint, requestTimeout, 0, false, false)
}
