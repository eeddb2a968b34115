package crio

import (
	"sync"
	"testing"

	info "github.com/google/cadvisor/info/v1"
)

type crioSpecLabelsMachine struct{}

func (crioSpecLabelsMachine) GetMachineInfo() (*info.MachineInfo, error) {
	return &info.MachineInfo{}, nil
}
func (crioSpecLabelsMachine) GetVersionInfo() (*info.VersionInfo, error) {
	return &info.VersionInfo{}, nil
}

// cadvisor's manager calls GetSpec from several goroutines. v0.29.1 wrote (as for docker)
// the restartcount label into the handler's own labels map, shared by
// every call: "concurrent map writes" killed the kubelet. v0.29.2, which
// 1.10.13 pins, no longer does.
func TestGetSpecLeavesTheHandlersLabelsAlone(t *testing.T) {
	h := &crioContainerHandler{
		labels:             map[string]string{"io.kubernetes.pod.name": "web"},
		restartCount:       3,
		machineInfoFactory: crioSpecLabelsMachine{},
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				h.GetSpec()
			}
		}()
	}
	wg.Wait()
	spec, _ := h.GetSpec()
	if spec.Labels["restartcount"] != "3" || spec.Labels["io.kubernetes.pod.name"] != "web" {
		t.Errorf("spec labels %v, want the container's and restartcount 3", spec.Labels)
	}
	if _, ok := h.labels["restartcount"]; ok {
		t.Errorf("GetSpec wrote restartcount into the handler's shared labels %v", h.labels)
	}
}
