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
	"path/filepath"

	"kubelet-toolchain/scripts/internal/controlplane"
)

// Layout is where a rehearsal keeps everything: all of it under Dir, so
// rehearsal-down knows what is ours.
type Layout struct {
	// Root is the repository root; Dir is <root>/_output/rehearsal.
	Root, Dir string
}

// NewLayout is the layout of the repository at root.
func NewLayout(root string) Layout {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	return Layout{Root: abs, Dir: filepath.Join(abs, "_output", "rehearsal")}
}

func (l Layout) Engine() string { return filepath.Join(l.Dir, "engine") }
func (l Layout) Cache() string  { return filepath.Join(l.Root, "_output", "cache") }
func (l Layout) Report() string { return filepath.Join(l.Dir, "report.json") }
func (l Layout) JUnit() string  { return filepath.Join(l.Dir, "junit.xml") }

// NodeConfig is the directory of a node's credentials and kubeconfigs.
func (l Layout) NodeConfig(node string) string { return filepath.Join(l.Dir, "nodes", node) }

// ControlPlane is where the rehearsal's control plane keeps its state.
func (l Layout) ControlPlane() controlplane.Layout { return controlplane.Layout{Dir: l.Dir} }
