//go:build linux
// +build linux

package cm

import (
	"errors"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1alpha2"
	critest "k8s.io/cri-api/pkg/apis/testing"
)

func sandbox(id, uid string) *critest.FakePodSandbox {
	return &critest.FakePodSandbox{PodSandboxStatus: runtimeapi.PodSandboxStatus{
		Id: id, State: runtimeapi.PodSandboxState_SANDBOX_READY,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod-" + id, Uid: uid, Namespace: "default"},
	}}
}

func container(id, name, sandboxID string) *critest.FakeContainer {
	return &critest.FakeContainer{SandboxID: sandboxID, ContainerStatus: runtimeapi.ContainerStatus{
		Id: id, State: runtimeapi.ContainerState_CONTAINER_RUNNING,
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
	}}
}

// seeds/002: a workload container whose sandbox (and checkpoint) are gone
// made kubelet exit at start, forever. It must be skipped instead, and the
// other containers still mapped.
func TestBuildContainerMapSkipsOrphans(t *testing.T) {
	rs := critest.NewFakeRuntimeService()
	rs.SetFakeSandboxes([]*critest.FakePodSandbox{sandbox("sb-live", "uid-live")})
	rs.SetFakeContainers([]*critest.FakeContainer{
		container("c-live", "app", "sb-live"),
		container("c-orphan", "orphan", "sb-gone"),
	})

	cm, err := buildContainerMapFromRuntime(rs)
	if err != nil {
		t.Fatalf("an orphaned container stops start-up: %v", err)
	}
	if id, err := cm.GetContainerID("uid-live", "app"); err != nil || id != "c-live" {
		t.Errorf("live container mapped to %q, %v; want c-live", id, err)
	}
	if _, _, err := cm.GetContainerRef("c-orphan"); err == nil {
		t.Errorf("orphaned container was mapped")
	}
}

func TestBuildContainerMapWithoutOrphans(t *testing.T) {
	rs := critest.NewFakeRuntimeService()
	rs.SetFakeSandboxes([]*critest.FakePodSandbox{sandbox("sb1", "uid1"), sandbox("sb2", "uid2")})
	rs.SetFakeContainers([]*critest.FakeContainer{container("c1", "a", "sb1"), container("c2", "b", "sb2")})
	cm, err := buildContainerMapFromRuntime(rs)
	if err != nil {
		t.Fatal(err)
	}
	for uid, want := range map[string]string{"uid1": "c1", "uid2": "c2"} {
		name := map[string]string{"uid1": "a", "uid2": "b"}[uid]
		if id, err := cm.GetContainerID(uid, name); err != nil || id != want {
			t.Errorf("%s/%s -> %q, %v; want %q", uid, name, id, err, want)
		}
	}
}

// A runtime that fails to list must not make every container an orphan
// and start kubelet with an empty map: the error is returned, as the
// unpatched kubelet's start also failed then.
func TestBuildContainerMapReturnsListErrors(t *testing.T) {
	for _, call := range []string{"ListPodSandbox", "ListContainers"} {
		rs := critest.NewFakeRuntimeService()
		rs.SetFakeSandboxes([]*critest.FakePodSandbox{sandbox("sb1", "uid1")})
		rs.SetFakeContainers([]*critest.FakeContainer{container("c1", "a", "sb1")})
		rs.InjectError(call, errors.New("runtime unavailable"))
		if _, err := buildContainerMapFromRuntime(rs); err == nil {
			t.Errorf("%s failed, yet the container map was built without error", call)
		}
	}
}
