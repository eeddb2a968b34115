package debsrc_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/base/testtool"
	"kubelet-toolchain/scripts/internal/packaging/debsrc"
	"kubelet-toolchain/scripts/internal/packaging/dist"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
)

func release() *matrix.Release {
	return &matrix.Release{Release: "1.9.11", ModuleSum: "h1:x=", BuildDate: time.Unix(1538170522, 0).UTC(),
		Era: matrix.EraGodeps, CGO: true, Go: "go1.26.8", PauseImage: "pause:3.0",
		Series: matrix.Series{Build: "k19-build", Fixes: "k19-fixes"}}
}

const changeGo = `From 0 Mon Sep 17 00:00:00 2001
Subject: [PATCH] kubelet: say patched

---
diff --git a/cmd/kubelet/main.go b/cmd/kubelet/main.go
--- a/cmd/kubelet/main.go
+++ b/cmd/kubelet/main.go
@@ -1,2 +1,2 @@
 package main
-// vanilla
+// patched
`

func set(t *testing.T) *quilt.Set {
	added := "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: [PATCH] k19-fixes: add package new\n\n---\n" +
		"diff --git a/pkg/new/new.go b/pkg/new/new.go\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/new/new.go\n@@ -0,0 +1 @@\n+package new\n"
	return &quilt.Set{Release: "1.9.11", Variant: matrix.Patched, Series: []string{"k19-build", "k19-fixes"}, Patches: []quilt.Patch{
		{Series: "k19-build", Name: "k19-build/0001-say-patched.patch", Data: []byte(changeGo)},
		{Series: "k19-fixes", Name: "k19-fixes/0001-add-pkg-new-new.go.patch", Data: []byte(added)},
	}}
}

func TestNames(t *testing.T) {
	n, err := debsrc.NamesFor("1.9.11+k19-fixes")
	if err != nil {
		t.Fatal(err)
	}
	want := debsrc.Names{Upstream: "1.9.11+k19", Revision: "fixes", DSC: "kubelet_1.9.11+k19-fixes.dsc",
		Orig: "kubelet_1.9.11+k19.orig.tar.gz", DebianTar: "kubelet_1.9.11+k19-fixes.debian.tar.xz", Dir: "kubelet-1.9.11+k19"}
	if n != want {
		t.Errorf("NamesFor = %+v, want %+v", n, want)
	}
	if _, err := debsrc.NamesFor("1.18.6+vanilla"); err == nil {
		t.Error("a version without revision accepted for 3.0 (quilt)")
	}
}

// The README's claim: ours sorts above upstream's own package of the
// release (kubelet 1.9.11-00), below the next release's, and patched above
// vanilla -- as dpkg compares them.
func TestVersionsSortAsREADMESays(t *testing.T) {
	testtool.Need(t, "dpkg")
	order := []string{"1.9.11-00", "1.9.11-1", "1.9.11+k19-build", "1.9.11+k19-fixes", "1.9.11+k19-fixes.2", "1.9.12-00"}
	for i := 0; i+1 < len(order); i++ {
		if err := exec.Command("dpkg", "--compare-versions", order[i], "lt", order[i+1]).Run(); err != nil {
			t.Errorf("dpkg: %s is not lower than %s", order[i], order[i+1])
		}
	}
}

func TestDebianFiles(t *testing.T) {
	r := release()
	s := set(t)
	files, err := debsrc.DebianFiles(debsrc.Options{Release: r, Variant: matrix.Patched, Version: "1.9.11+k19-fixes", SHA256: strings.Repeat("ab", 32),
		Set: s, BuildCommand: `env GOTOOLCHAIN=go1.26.8 GOPATH="$PWD" go build -o kubelet k8s.io/kubernetes/cmd/kubelet`})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"debian/source/format": {"3.0 (quilt)\n"},
		"debian/control": {"Source: kubelet\n", "Build-Depends: debhelper-compat (= 13), golang-go (>= 2:1.21~), libc6-dev\n",
			"\nPackage: kubelet\nArchitecture: amd64\n", "Depends: ${shlibs:Depends}, ${misc:Depends}, iptables, mount, init-system-helpers (>= 1.18~)\n", "Conflicts: kubernetes-node\n"},
		"debian/rules": {"#!/usr/bin/make -f\n", "\n%:\n\tdh $@\n",
			// $ doubled for make, the line otherwise as build.sh has it.
			"\tcd _build && env GOTOOLCHAIN=go1.26.8 GOPATH=\"$$PWD\" go build -o kubelet k8s.io/kubernetes/cmd/kubelet\n",
			"\tln -sfn ../../.. _build/src/k8s.io/kubernetes\n", "\noverride_dh_strip override_dh_dwz:\n",
			"install -D -m 0755 _build/kubelet debian/kubelet/usr/bin/kubelet\n"},
		"debian/changelog": {"kubelet (1.9.11+k19-fixes) unstable; urgency=medium\n",
			"  * k19-build (Go compatibility fixes):\n    - 0001 kubelet: say patched\n",
			"  * k19-fixes (production fixes):\n    - 0001 add package new\n",
			"\n -- Kubelet Toolchain <toolchain@kubelet-toolchain.invalid>  Fri, 28 Sep 2018 21:35:22 +0000\n"},
		// 1.9: the unit reads no flags file (kubeadm's drop-in of 1.9 reads
		// none); the earlier packages' KUBELET_ARGS kept by the postinst.
		"debian/kubelet.service":                          {"\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS $KUBELET_ARGS\n"},
		"debian/kubelet.default":                          {"KUBELET_EXTRA_ARGS=\n"},
		"debian/kubelet.postinst":                         {"deb-systemd-invoke start kubelet.service", "/etc/systemd/system/kubelet.service.d/05-kubelet-args.conf"},
		"debian/kubelet.prerm":                            {"deb-systemd-invoke stop kubelet.service"},
		"debian/copyright":                                {"License: Apache-2.0\n"},
		"debian/patches/series":                           {"\nk19-build/0001-say-patched.patch\nk19-fixes/0001-add-pkg-new-new.go.patch\n"},
		"debian/patches/k19-build/0001-say-patched.patch": {changeGo},
	}
	for name, parts := range want {
		f, ok := files[name]
		if !ok {
			t.Errorf("no %s", name)
			continue
		}
		for _, p := range parts {
			if !strings.Contains(string(f.Data), p) {
				t.Errorf("%s lacks %q:\n%s", name, p, f.Data)
			}
		}
	}
	if files["debian/rules"].Mode != 0o755 {
		t.Error("debian/rules is not executable")
	}
	if _, err := debsrc.DebianFiles(debsrc.Options{Release: r, Version: "1.9.11+vanilla", Set: s}); err == nil {
		t.Error("a version without revision accepted")
	}
}

// Builds a source package around a stand-in tree with the real
// dpkg-source, twice (same bytes), then checks it against the tree the
// patches make, and against a tree that differs.
// A release serving its dockershim on its own: the source builds a second
// binary package from the same tree, its files in debian/, and make reads
// the rules (make -n runs no recipe).
func TestDebianFilesWithShim(t *testing.T) {
	testtool.Need(t, "make")
	r := release()
	r.Series.Shim = "dockershim"
	files, err := debsrc.DebianFiles(debsrc.Options{Release: r, Variant: matrix.Patched, Version: "1.9.11+k19-fixes", SHA256: strings.Repeat("ab", 32),
		ShimSHA256: strings.Repeat("cd", 32), Set: set(t),
		BuildCommand: "( env GOPATH=\"$PWD\" go build -o dockershim k8s.io/kubernetes/cmd/dockershim )\nenv GOPATH=\"$PWD\" go build -o kubelet k8s.io/kubernetes/cmd/kubelet"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"debian/control": {"\nPackage: kubelet\n", "\nPackage: dockershim\nArchitecture: amd64\nDepends: ${shlibs:Depends}, ${misc:Depends}, iptables\n", strings.Repeat("cd", 32)},
		"debian/rules": {"\tcd _build && ( env GOPATH=\"$$PWD\" go build -o dockershim k8s.io/kubernetes/cmd/dockershim )\n\tcd _build && env GOPATH=\"$$PWD\" go build -o kubelet",
			"install -D -m 0755 _build/dockershim debian/dockershim/usr/bin/dockershim\n", "debian/dockershim/lib/systemd/system/dockershim.service\n",
			"debian/dockershim/etc/default/dockershim"},
		"debian/dockershim.service":  {"EnvironmentFile=-/etc/default/dockershim\n", "ExecStart=/usr/bin/dockershim $DOCKERSHIM_ARGS\n"},
		"debian/dockershim.default":  {"DOCKERSHIM_ARGS=\"\"\n"},
		"debian/dockershim.postinst": {"try-restart dockershim.service"},
		"debian/dockershim.prerm":    {"systemctl stop dockershim.service"},
	}
	for name, parts := range want {
		for _, p := range parts {
			if !strings.Contains(string(files[name].Data), p) {
				t.Errorf("%s lacks %q:\n%s", name, p, files[name].Data)
			}
		}
	}
	if strings.Contains(string(files["debian/dockershim.postinst"].Data), "enable") {
		t.Errorf("the shim's postinst enables it:\n%s", files["debian/dockershim.postinst"].Data)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules"), files["debian/rules"].Data, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("make", "-n", "-f", filepath.Join(dir, "rules"), "-C", dir, "override_dh_auto_build", "override_dh_auto_install").CombinedOutput(); err != nil {
		t.Errorf("make cannot read debian/rules: %v\n%s", err, out)
	}
}

func TestBuildAndCheck(t *testing.T) {
	testtool.Need(t, "dpkg-source", "patch", "diff")
	ctx := context.Background()
	dir := t.TempDir()
	r := release()
	s := set(t)
	pristine := filepath.Join(dir, "pristine")
	for name, data := range map[string]string{"cmd/kubelet/main.go": "package main\n// vanilla\n", "LICENSE": "Apache-2.0\n"} {
		p := filepath.Join(pristine, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	os.Symlink("cmd", filepath.Join(pristine, "link"))
	n, _ := debsrc.NamesFor("1.9.11+k19-fixes")
	tb := dist.NewTarball()
	if err := tb.AddTree("kubernetes-1.9.11", pristine, nil); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	orig := filepath.Join(out, n.Orig)
	if err := tb.Write(orig, r.BuildDate); err != nil {
		t.Fatal(err)
	}
	o := debsrc.Options{Release: r, Variant: matrix.Patched, Version: "1.9.11+k19-fixes", SHA256: strings.Repeat("ab", 32), Set: s,
		BuildCommand: "env go build", Orig: orig, OutDir: out, TmpParent: dir, Log: io.Discard}
	if err := debsrc.Build(ctx, o); err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for _, f := range []string{n.DSC, n.DebianTar} {
		first[f], _ = checksums.SHA256(filepath.Join(out, f))
	}
	if err := debsrc.Build(ctx, o); err != nil {
		t.Fatal(err)
	}
	for f, want := range first {
		if got, _ := checksums.SHA256(filepath.Join(out, f)); got != want {
			t.Errorf("%s differs between two builds", f)
		}
	}

	built := filepath.Join(dir, "built")
	if err := exec.Command("cp", "-a", pristine, built).Run(); err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Patches {
		cmd := exec.Command("patch", "-p1", "-s")
		cmd.Dir, cmd.Stdin = built, strings.NewReader(string(p.Data))
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", p.Name, err, o)
		}
	}
	res, err := debsrc.Check(ctx, filepath.Join(out, n.DSC), built, s, dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 4 {
		t.Errorf("Check compared %d files, want 4", res.Files)
	}
	os.WriteFile(filepath.Join(built, "cmd", "kubelet", "main.go"), []byte("package main\n// edited\n"), 0o644)
	if _, err := debsrc.Check(ctx, filepath.Join(out, n.DSC), built, s, dir, io.Discard); err == nil || !strings.Contains(err.Error(), "main.go") {
		t.Errorf("a tree that differs passed the check: %v", err)
	}

	// debian/patches one byte away from the export (in a patch's
	// description, so the unpacked tree is still the built one): refused.
	altered := *s
	altered.Patches = append([]quilt.Patch(nil), s.Patches...)
	data := []byte(string(altered.Patches[0].Data))
	i := strings.Index(string(data), "say patched")
	data[i] = 'S'
	altered.Patches[0].Data = data
	os.WriteFile(filepath.Join(built, "cmd", "kubelet", "main.go"), []byte("package main\n// patched\n"), 0o644)
	if _, err := debsrc.Check(ctx, filepath.Join(out, n.DSC), built, &altered, dir, io.Discard); err == nil || !strings.Contains(err.Error(), "debian/patches/k19-build/0001-say-patched.patch differs from the export") {
		t.Errorf("a patch that differs from the export passed the check: %v", err)
	}
}

// A package revision: its own entry on top, dated at the revision and
// saying what changed, above the first packages' entry.
func TestChangelogPackageRevision(t *testing.T) {
	r := release()
	r.PackageRevision = &matrix.PackageRevision{Number: 2, Date: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), Changes: "static pods keep their UID"}
	got := debsrc.Changelog(r, matrix.Patched, r.PackageVersion(matrix.Patched), nil)
	for _, want := range []string{"kubelet (1.9.11+k19-fixes.2) unstable; urgency=medium\n\n  * Package revision 2: static pods keep their UID\n",
		" -- Kubelet Toolchain <toolchain@kubelet-toolchain.invalid>  Wed, 25 Nov 2026 00:00:00 +0000\n\nkubelet (1.9.11+k19-fixes) unstable; urgency=medium\n\n  * First packages of this release.\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("changelog lacks %q:\n%s", want, got)
		}
	}
}
