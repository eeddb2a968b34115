package build

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/ctoolchain"
)

// compileCommand is the go build line every target shares: reproducible
// (-trimpath, empty build id, the pinned build date), stamped the way
// hack/lib/version.sh stamps with vars, plus extra -ldflags; with the
// official build's tags, and with cgo through the pinned C toolchain.
func compileCommand(r *matrix.Release, vars [][2]string, extra []string, cgoOn bool, p Paths) (args, env []string) {
	var ldflags []string
	for _, pkg := range versionPackages(r) {
		for _, kv := range vars {
			ldflags = append(ldflags, fmt.Sprintf("-X '%s.%s=%s'", pkg, kv[0], kv[1]))
		}
	}
	ldflags = append(ldflags, extra...)
	if cgoOn {
		// Go does not hand -s to the external linker: zig's would keep
		// the C runtime's symbols and debug info, paths of this machine in them.
		ldflags = append(ldflags, "-extldflags=-s")
	}
	args = []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w -buildid= " + strings.Join(ldflags, " ")}
	if len(r.Tags) > 0 {
		args = append(args, "-tags", strings.Join(r.Tags, ","))
	}
	cgo := "0"
	if cgoOn {
		cgo = "1"
	}
	env = []string{"GOTOOLCHAIN=" + r.Go, "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=" + cgo, "GOWORK=off",
		fmt.Sprintf("SOURCE_DATE_EPOCH=%d", r.BuildDate.Unix())}
	if cgoOn {
		env = append(env, ctoolchain.Env(ctoolchain.Dir(p.CToolchain, r.CToolchain), r.CToolchain)...)
	}
	if r.Era == matrix.EraModules {
		env = append(env, "GO111MODULE=on", "GOFLAGS=-mod=vendor")
	} else {
		env = append(env, "GO111MODULE=off", "GOFLAGS=", "GOPATH="+p.GOPATH)
	}
	return args, env
}

// UsesCToolchain reports whether a go command's environment builds cgo
// with the pinned C toolchain (which must then be fetched first).
func UsesCToolchain(env []string) bool { return slices.Contains(env, "CGO_ENABLED=1") }

// EnsureCToolchain fetches and unpacks the pinned C toolchain where p
// keeps it when env builds cgo.
func EnsureCToolchain(ctx context.Context, r *matrix.Release, p Paths, env []string, log io.Writer) error {
	if !UsesCToolchain(env) {
		return nil
	}
	_, err := ctoolchain.Ensure(ctx, p.CToolchain, r.CToolchain, log)
	return err
}

// goDir is where go runs for a tree: the module root, or the GOPATH.
func goDir(r *matrix.Release, p Paths) string {
	if r.Era == matrix.EraModules {
		return p.Tree
	}
	return p.GOPATH
}

// goPackage names a package of the tree as go sees it in the release's era.
func goPackage(r *matrix.Release, rel string) string {
	if r.Era == matrix.EraModules {
		return "./" + rel
	}
	return "k8s.io/kubernetes/" + rel
}

// versionPackages are the packages hack/lib/version.sh stamps, as import
// paths the linker sees in this era. Up to 1.16 the kubelet reports
// k8s.io/kubernetes/pkg/version (1.15 and 1.16 are modules-era trees that
// still stamp it); from 1.17 component-base's. kubectl reads its own
// package in 1.15 (pkg/kubectl/version) and 1.16 (k8s.io/kubectl's, with
// kubeadm's), which the kubelet does not link.
func versionPackages(r *matrix.Release) []string {
	if r.Era != matrix.EraModules {
		return []string{"k8s.io/kubernetes/pkg/version", "k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version"}
	}
	pkgs := []string{"k8s.io/client-go/pkg/version", "k8s.io/component-base/version"}
	switch r.Version().Minor {
	case 15:
		pkgs = append([]string{"k8s.io/kubernetes/pkg/version"}, append(pkgs, "k8s.io/kubernetes/pkg/kubectl/version")...)
	case 16:
		pkgs = append([]string{"k8s.io/kubernetes/pkg/version"}, append(pkgs, "k8s.io/kubectl/pkg/version", "k8s.io/kubernetes/cmd/kubeadm/app/version")...)
	}
	return pkgs
}

// VersionVars are the stamped key/value pairs of a kubelet variant.
func VersionVars(r *matrix.Release, v matrix.Variant) [][2]string {
	return versionVars(r, r.GitVersion(v))
}

func versionVars(r *matrix.Release, gitVersion string) [][2]string {
	major, minor := r.MajorMinor()
	vars := [][2]string{{"buildDate", r.BuildDate.UTC().Format("2006-01-02T15:04:05Z")}}
	if r.GitCommit != "" {
		// "archive": built from a source archive, not a git checkout.
		vars = append(vars, [2]string{"gitCommit", r.GitCommit}, [2]string{"gitTreeState", "archive"})
	}
	return append(vars, [2]string{"gitVersion", gitVersion}, [2]string{"gitMajor", major}, [2]string{"gitMinor", minor})
}
