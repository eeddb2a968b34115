package rpm_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/base/testtool"
	"kubelet-toolchain/scripts/internal/packaging/dist"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
	"kubelet-toolchain/scripts/internal/packaging/rpm"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
)

// A stand-in tree: a GOPATH-era k8s.io/kubernetes whose cmd/kubelet prints
// the stamped version, one patch that changes it and one added file.
const mainGo = `package main

import (
	"fmt"

	"k8s.io/kubernetes/pkg/version"
)

func main() { fmt.Println("Kubernetes " + version.Get()) }
`

const versionGo = `package version

var gitVersion = "v0.0.0"

func Get() string { return gitVersion }
`

const changeGo = `diff --git a/cmd/kubelet/main.go b/cmd/kubelet/main.go
--- a/cmd/kubelet/main.go
+++ b/cmd/kubelet/main.go
@@ -6,4 +6,4 @@ import (
 	"k8s.io/kubernetes/pkg/version"
 )
 
-func main() { fmt.Println("Kubernetes " + version.Get()) }
+func main() { fmt.Println("Kubernetes " + version.Get() + extra) }
`

// Builds a SRPM and an RPM from the stand-in with the real rpmbuild, then
// runs the checks make check-package runs, and one that must fail.
func TestBuildAndCheck(t *testing.T) { buildAndCheck(t, false) }

// The same with a release that serves its dockershim on its own: one
// SRPM, two binary RPMs (kubelet and the dockershim subpackage), each
// holding the binary the build line made.
func TestBuildAndCheckWithShim(t *testing.T) { buildAndCheck(t, true) }

func buildAndCheck(t *testing.T, shim bool) {
	testtool.Need(t, "rpmbuild", "rpm", "go")
	ctx := context.Background()
	dir := t.TempDir()
	r := &matrix.Release{Release: "1.9.11", ModuleSum: "h1:x=", GitCommit: strings.Repeat("a", 40),
		BuildDate: time.Unix(1538170522, 0).UTC(), Era: matrix.EraGodeps, Go: runtime.Version(),
		Series: matrix.Series{Build: "k19-build", Fixes: "k19-fixes"}}
	files := map[string]string{"cmd/kubelet/main.go": mainGo, "pkg/version/version.go": versionGo, "LICENSE": "Apache-2.0\n"}
	if shim {
		r.Series.Shim = "dockershim"
		files["cmd/dockershim/main.go"] = mainGo
	}
	v := matrix.Patched
	version := r.PackageVersion(v)

	tree := filepath.Join(dir, "tree")
	for name, data := range files {
		p := filepath.Join(tree, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tb := dist.NewTarball()
	if err := tb.AddTree("kubernetes-1.9.11", tree, nil); err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(dir, "orig.tar.gz")
	if err := tb.Write(orig, r.BuildDate); err != nil {
		t.Fatal(err)
	}
	added := []byte("From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] k19-fixes: add the extra\n\n---\n" +
		"diff --git a/cmd/kubelet/extra.go b/cmd/kubelet/extra.go\nnew file mode 100644\n--- /dev/null\n+++ b/cmd/kubelet/extra.go\n" +
		"@@ -0,0 +1,3 @@\n+package main\n+\n+const extra = \" (patched)\"\n")
	patches := []quilt.Patch{
		{Series: "k19-build", Name: "k19-build/0001-change.patch", Data: []byte("From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] change main\n\n---\n" + changeGo)},
		{Series: "k19-fixes", Name: "k19-fixes/0001-add-cmd-kubelet-extra.go.patch", Data: added},
	}

	// The released binary: the same line, run on the tree patched by hand.
	gopath := filepath.Join(dir, "gopath")
	kube := filepath.Join(gopath, "src", "k8s.io", "kubernetes")
	os.MkdirAll(filepath.Dir(kube), 0o755)
	if err := exec.Command("cp", "-a", tree, kube).Run(); err != nil {
		t.Fatal(err)
	}
	for _, p := range patches {
		cmd := exec.Command("patch", "-p1", "-s")
		cmd.Dir, cmd.Stdin = kube, strings.NewReader(string(p.Data))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", p.Name, err, out)
		}
	}
	line := dist.BuildCommand(r, v, true)
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = gopath
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	sum, err := checksums.SHA256(filepath.Join(gopath, "kubelet"))
	if err != nil {
		t.Fatal(err)
	}
	shimSum := ""
	if shim {
		if shimSum, err = checksums.SHA256(filepath.Join(gopath, "dockershim")); err != nil {
			t.Fatalf("the build line made no dockershim: %v\n%s", err, line)
		}
	}

	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	o := rpm.Options{
		Spec: rpm.SpecInput{Release: r, Variant: v, Version: version, SHA256: sum, ShimSHA256: shimSum, Source0: "kubernetes-1.9.11-restored.tar.gz",
			TopDir: "kubernetes-1.9.11", Patches: patches, BuildCommand: line},
		Source0Path: orig, Unit: []byte("[Unit]\n"), Sysconfig: []byte("KUBELET_ARGS=\n"),
		ShimUnit: []byte("[Unit]\n"), ShimSysconfig: []byte("DOCKERSHIM_ARGS=\n"),
		SpecOut: filepath.Join(out, rpm.SpecFileName(version)), SRPM: filepath.Join(out, rpm.SRPMFileName(version)), RPM: filepath.Join(out, rpm.RPMFileName(version)),
		ShimRPM:   filepath.Join(out, rpm.ShimRPMFileName(version)),
		TmpParent: dir, Log: io.Discard,
	}
	if err := rpm.Build(ctx, o); err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	built := []string{o.SpecOut, o.SRPM, o.RPM}
	if shim {
		built = append(built, o.ShimRPM)
	} else if _, err := os.Stat(o.ShimRPM); err == nil {
		t.Errorf("a release without a shim got %s", o.ShimRPM)
	}
	for _, f := range built {
		first[f], _ = checksums.SHA256(f)
	}
	if err := rpm.Build(ctx, o); err != nil {
		t.Fatal(err)
	}
	for f, want := range first {
		if got, _ := checksums.SHA256(f); got != want {
			t.Errorf("%s differs between two builds", filepath.Base(f))
		}
	}
	in := rpm.CheckInput{Release: r, Variant: v, Version: version, Spec: o.SpecOut, SRPM: o.SRPM, RPM: o.RPM, Patches: patches,
		Source0: o.Spec.Source0, Orig: orig, SHA256: sum, Kubelet: "Kubernetes " + r.GitVersion(v) + " (patched)", TmpParent: dir, Log: io.Discard}
	if shim {
		in.ShimRPM, in.ShimSHA256, in.Shim = o.ShimRPM, shimSum, "Kubernetes "+r.GitVersion(v)
	}
	res, err := rpm.Check(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rebuilt != sum || !res.SameRPM || res.NEVRA != "kubelet-1.9.11-1.k19_fixes.x86_64" {
		t.Errorf("Check = %+v", res)
	}
	if shim {
		if res.ShimRebuilt != shimSum || !res.SameShimRPM {
			t.Errorf("Check = %+v: the dockershim subpackage was not rebuilt as released", res)
		}
		in.ShimSHA256 = strings.Repeat("0", 64)
		if _, err := rpm.Check(ctx, in); err == nil || !strings.Contains(err.Error(), "built a dockershim with sha256 "+shimSum) {
			t.Errorf("a dockershim with another sha256 passed the check: %v", err)
		}
		in.ShimSHA256 = shimSum
	}

	// The spec in the dist dir without its last PatchN: the series and
	// the spec disagree.
	spec, _ := os.ReadFile(o.SpecOut)
	broken := strings.Replace(string(spec), "Patch2:         k19-fixes-0001-add-cmd-kubelet-extra.go.patch\n", "", 1)
	if broken == string(spec) {
		t.Fatal("no Patch2 line to drop")
	}
	os.WriteFile(o.SpecOut, []byte(broken), 0o644)
	if _, err := rpm.Check(ctx, in); err == nil || !strings.Contains(err.Error(), "the PatchN lines are not the series: missing k19-fixes-0001-add-cmd-kubelet-extra.go.patch") {
		t.Errorf("a spec without Patch2 passed the check: %v", err)
	}
	os.WriteFile(o.SpecOut, spec, 0o644)
	in.SHA256 = strings.Repeat("0", 64)
	if _, err := rpm.Check(ctx, in); err == nil || !strings.Contains(err.Error(), "built a kubelet with sha256 "+sum) {
		t.Errorf("a rebuild with another sha256 passed the check: %v", err)
	}
}
