package matrix

import "fmt"

// ShimFrom is the first minor whose kubelet has no dockershim inside
// (kubernetes#106907): its kubelets run on a standalone dockershim, the
// one a release's Series.Shim builds.
const ShimFrom = 24

// RunsOnShim reports whether r's kubelet needs a standalone dockershim.
func (r *Release) RunsOnShim() bool { return r.Version().Minor >= ShimFrom }

// ShimRelease is the release whose dockershim (Series.Shim) the kubelets
// of ShimFrom and later run on.
func (m *Matrix) ShimRelease() (*Release, error) {
	for i := range m.Releases {
		if m.Releases[i].Series.Shim != "" {
			return &m.Releases[i], nil
		}
	}
	return nil, fmt.Errorf("no release in %s builds a dockershim (series.shim): kubelets from 1.%d need one", m.File, ShimFrom)
}
