package matrix

// Role says in a few words what the named series of a release is for, as
// the comments of versions.yaml do (for changelogs).
func (s Series) Role(name string) string {
	switch name {
	case s.Build:
		return "Go compatibility fixes"
	case s.LockFixes:
		return "what the dependency lock's substitutions lose, put back"
	case s.LegacyTypes:
		return "older releases' type graphs and go1.8.3's runtime layouts, for what official kubelets derive"
	case s.Defaults:
		return "Go's current TLS and X.509 defaults"
	case s.Tools:
		return "the toolchain's cmd/podhash helper, not linked into kubelet"
	case s.Shim:
		return "the standalone dockershim (cmd/dockershim), not linked into kubelet"
	case s.Fixes:
		return "production fixes"
	case s.ControlPlane:
		return "what only the control plane's commands need"
	case s.Conformance:
		return "the node conformance harness (e2e_node.test), not linked into kubelet"
	}
	for _, shared := range s.SharedFixes {
		if name == shared {
			return "tests shared by several releases' fixes, not linked into kubelet"
		}
	}
	return "series"
}
