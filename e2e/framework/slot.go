package framework

// slot is this process's place among the e2e's parallel Ginkgo
// processes: 1 unless the suite says otherwise (SetSlot).
var slot = 1

// SetSlot records this process's place among the e2e's parallel Ginkgo
// processes (GinkgoParallelProcess), from the suite's BeforeSuite.
func SetSlot(n int) {
	if n > 0 {
		slot = n
	}
}

// Slot is this process's place among the e2e's parallel Ginkgo processes
// (1 when the suite runs alone). A process runs one spec at a time, so
// what a slot owns -- its engine (EngineSocket), its ports (SlotPorts),
// its rehearsal instance -- belongs to one running spec, never to two at
// once.
func Slot() int { return slot }

// Ports are the loopback ports a slot's kubelets and pods bind. None is a
// default a production kubelet holds (10248, 10250, 10255).
type Ports struct {
	Kubelet int // --port, TLS (exec, attach, logs)
	Healthz int // --healthz-port
	// HostNetwork and HostPort are the upgrade suite's pods': a
	// hostNetwork server's port and a sandbox's hostPort binding.
	HostNetwork, HostPort int
}

// SlotPorts are the ports of this process's slot: 100 apart per slot.
func SlotPorts() Ports {
	off := 100 * (Slot() - 1)
	return Ports{Kubelet: 20250 + off, Healthz: 20248 + off, HostNetwork: 18086 + off, HostPort: 18091 + off}
}
