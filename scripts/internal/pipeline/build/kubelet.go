package build

import (
	"context"
	"fmt"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// PathsFor returns the kubelet's layout for a release and variant under an
// output dir: _output/<release>/<variant>/bin/linux/amd64/kubelet, as
// upstream's build lays it out.
func PathsFor(output, release string, v matrix.Variant) Paths {
	p := targetPaths(output, release, string(v), "bin/linux/amd64")
	p.Binary = p.In("kubelet")
	return p
}

// KubeletTarget is the kubelet of o's release and variant.
func KubeletTarget(o Options) *Target {
	o = o.withDefaults()
	r, v := o.Release, o.Variant
	p := PathsFor(o.OutputDir, r.Release, v)
	args, env := CompileCommand(r, v, p)
	// The stamp lands only where the tree's version package is
	// (versionPackages): a wrong guess builds a binary reporting
	// v0.0.0-master.
	output := func(name string) Output {
		return Output{Name: name, GoArgs: args, Package: goPackage(r, "cmd/"+name), Dir: BuildDir(r, p), Env: env,
			Check: func(ctx context.Context, bin string) error {
				return CheckReportedVersion(ctx, bin, name, r.GitVersion(v), r.GitCommit)
			}}
	}
	t := &Target{
		Name:     string(v),
		Series:   r.Series.For(v),
		Paths:    p,
		SumsFile: "kubelet.sha256",
		Outputs:  []Output{output("kubelet")},
	}
	// One target, so neither build replaces the bin directory without the
	// other (a build swaps the whole directory in).
	if r.Series.Shim != "" {
		// The shim series carries its own copy of the defaults series'
		// //go:debug file (they count only in a main package), so the
		// Debian source builds it as this target does.
		t.Outputs = append(t.Outputs, output("dockershim"))
	}
	return t
}

// Kubelet builds the kubelet of o's release and variant.
func Kubelet(ctx context.Context, o Options) (*Result, error) {
	return Run(ctx, o, KubeletTarget(o))
}

// KubeletPackage is cmd/kubelet as go sees it in the release's era.
func KubeletPackage(r *matrix.Release) string { return goPackage(r, "cmd/kubelet") }

// BuildDir is where go runs for a kubelet tree.
func BuildDir(r *matrix.Release, p Paths) string { return goDir(r, p) }

// CompileCommand returns the kubelet's go build arguments (without -o and
// package) and environment: the shared reproducible, stamped line plus
// the patched variant's baselines.
func CompileCommand(r *matrix.Release, v matrix.Variant, p Paths) (args, env []string) {
	var extra []string
	if v == matrix.Patched && r.HashBaseline != "" {
		extra = append(extra, fmt.Sprintf("-X '%s=%s'", hashBaselineVar, r.HashBaseline))
	}
	if v == matrix.Patched && r.UIDBaseline != "" {
		extra = append(extra, fmt.Sprintf("-X '%s=%s'", uidBaselineVar, r.UIDBaseline))
	}
	return compileCommand(r, versionVars(r, r.GitVersion(v)), extra, r.CGO, p)
}

// hashBaselineVar selects the baseline of the legacy container hash patch
// (overlay pkg/kubelet/container/legacyhash); the same path in both eras.
const hashBaselineVar = "k8s.io/kubernetes/pkg/kubelet/container/legacyhash.baseline"

// uidBaselineVar selects the static pod UID baseline (versions.yaml
// uidBaseline) of the static pod identity patch (overlay legacy-types).
const uidBaselineVar = "k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid.baseline"
