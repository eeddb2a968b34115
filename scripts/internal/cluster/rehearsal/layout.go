// Package rehearsal runs an operator's upgrade rehearsal: a throwaway
// cluster whose control plane runs on the machine (Debian's etcd, a 1.9.11
// API server, controller manager and scheduler built by the toolchain)
// and whose nodes are containers on an engine of the rehearsal's own,
// each running dockerd and a kubelet (package nodes). Workloads go in
// through the API server; each node's kubelet is then switched in place,
// FROM -> TO -> FROM -> TO, and what happened to every pod is read back
// from the API and the nodes' engines and judged against the preflight.
package rehearsal

import (
	"fmt"
	"path/filepath"
	"strconv"

	"kubelet-toolchain/scripts/internal/cluster/controlplane"
)

// Layout is where a rehearsal keeps everything: all of it under Dir, so
// rehearsal-down knows what is ours.
type Layout struct {
	// Root is the repository root; Dir is <root>/_output/rehearsal, or
	// <root>/_output/rehearsal-<n> for instance n.
	Root, Dir string
	// Instance is which of the machine's rehearsals this is: 0 is
	// `make rehearsal`'s; the e2e's parallel processes run their own
	// (their slot's). Each has its own engine, bridge, subnet, control
	// plane ports and lock.
	Instance int
}

// MaxInstance bounds the instances (their subnets and ports).
const MaxInstance = 30

// CheckInstance refuses an instance number out of range.
func CheckInstance(n int) error {
	if n < 0 || n > MaxInstance {
		return fmt.Errorf("rehearsal instance %d: want 0..%d", n, MaxInstance)
	}
	return nil
}

// NewLayout is the layout of instance 0 of the repository at root.
func NewLayout(root string) Layout { return NewLayoutFor(root, 0) }

// NewLayoutFor is the layout of an instance of the repository at root.
func NewLayoutFor(root string, instance int) Layout {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	dir := "rehearsal"
	if instance > 0 {
		dir += "-" + strconv.Itoa(instance)
	}
	return Layout{Root: abs, Dir: filepath.Join(abs, "_output", dir), Instance: instance}
}

// DefaultNetwork is the instance's bridge and subnet, in RFC 2544's
// benchmarking range: kubelet-rh0 on 198.18.202.1/24 for instance 0,
// kubelet-rh<n> on 198.18.<220+n>.1/24 for the others (the node e2e's
// engines sit on 198.18.201 and 198.18.211-219, the nodes suite's on 203).
func (l Layout) DefaultNetwork() Network {
	if l.Instance == 0 {
		return Network{Bridge: "kubelet-rh0", CIDR: "198.18.202.1/24"}
	}
	return Network{Bridge: fmt.Sprintf("kubelet-rh%d", l.Instance), CIDR: fmt.Sprintf("198.18.%d.1/24", 220+l.Instance)}
}

// Ports are the instance's control plane ports.
func (l Layout) Ports() controlplane.Ports { return controlplane.PortsFor(l.Instance) }

func (l Layout) Engine() string { return filepath.Join(l.Dir, "engine") }
func (l Layout) Cache() string  { return filepath.Join(l.Root, "_output", "cache") }
func (l Layout) Report() string { return filepath.Join(l.Dir, "report.json") }
func (l Layout) JUnit() string  { return filepath.Join(l.Dir, "junit.xml") }

// NodeConfig is the directory of a node's credentials and kubeconfigs.
func (l Layout) NodeConfig(node string) string { return filepath.Join(l.Dir, "nodes", node) }

// ControlPlane is where the rehearsal's control plane keeps its state.
func (l Layout) ControlPlane() controlplane.Layout { return controlplane.Layout{Dir: l.Dir} }
