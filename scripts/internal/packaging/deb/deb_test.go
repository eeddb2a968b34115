package deb

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
	"kubelet-toolchain/scripts/internal/pipeline/glibc"
	"kubelet-toolchain/tools/execx"
)

// Builds a package around a stand-in binary (a dynamically linked system
// tool), then runs the same check make check-package runs on the real one.
func TestBuildAndCheck(t *testing.T) {
	testtool.Need(t, "dpkg-deb", "dpkg", "dpkg-query")
	// The stand-in is GNU coreutils' true (Debian's coreutils is Essential:
	// on every machine scripts/prereqs.sh supports): dynamically linked
	// (the package's libc6 dependency comes from it) and answering
	// --version, as a kubelet does. Anything else is a broken machine, not
	// a reason to skip the package's only build-and-check test.
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Fatalf("no true(1) on PATH (%v): Debian's coreutils (Essential) provides it", err)
	}
	want, err := execx.Run(context.Background(), execx.Cmd{Name: bin, Args: []string{"--version"}})
	if err != nil || len(want) == 0 {
		t.Fatalf("%s --version printed %q (%v): the stand-in must be GNU coreutils' true (Debian's coreutils), not another true(1) earlier on PATH", bin, want, err)
	}
	dir := t.TempDir()
	r := &matrix.Release{Release: "1.9.11", BuildDate: time.Unix(1538170522, 0).UTC(),
		Era: matrix.EraGodeps, CGO: true, Go: "go1.26.8", PauseImage: "pause:3.0", Series: matrix.Series{Build: "k19-build", Fixes: "k19-fixes"}}
	out := filepath.Join(dir, FileName("1.9.11+k19-fixes"))
	o := Options{Release: r, Variant: matrix.Patched, Version: "1.9.11+k19-fixes", Binary: bin, SHA256: strings.Repeat("0", 64), Out: out}
	if err := Build(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(out)
	if err := Build(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(out); string(first) != string(second) {
		t.Error("two builds of the same package differ")
	}
	deps, err := execx.Run(context.Background(), execx.Cmd{Name: "dpkg-deb", Args: []string{"-f", out, "Depends", "Conflicts"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(deps), "Depends: libc6 (>= 2.") || !strings.Contains(string(deps), "Conflicts: kubernetes-node") {
		t.Errorf("fields:\n%s", deps)
	}
	// The stand-in needs the machine's glibc: that is its floor here.
	newest, err := glibc.Newest(bin)
	if err != nil || newest == "" {
		t.Fatalf("the stand-in needs no glibc version (%v)", err)
	}
	got, err := Check(context.Background(), out, "1.9.11+k19-fixes", strings.TrimSpace(string(want)), newest, dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(string(want)) {
		t.Errorf("Check returned %q", got)
	}
	if _, err := Check(context.Background(), out, "1.9.11+other", strings.TrimSpace(string(want)), newest, dir, io.Discard); err == nil {
		t.Error("wrong version accepted")
	}
	// Below it, the package is refused: apt would not install it there.
	if _, err := Check(context.Background(), out, "1.9.11+k19-fixes", strings.TrimSpace(string(want)), "2.2.5", dir, io.Discard); err == nil || !strings.Contains(err.Error(), "libc6 "+newest) {
		t.Errorf("a Depends above the floor passed: %v", err)
	}
}

// The shim's .deb around the same stand-in: its files, and an install
// that enables and starts nothing; a postinst that started it is caught.
func TestBuildAndCheckShim(t *testing.T) {
	testtool.Need(t, "dpkg-deb", "dpkg", "dpkg-query")
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Fatalf("no true(1) on PATH (%v): Debian's coreutils (Essential) provides it", err)
	}
	want, err := execx.Run(context.Background(), execx.Cmd{Name: bin, Args: []string{"--version"}})
	if err != nil {
		t.Fatal(err)
	}
	newest, err := glibc.Newest(bin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := &matrix.Release{Release: "1.23.17", BuildDate: time.Unix(1677072466, 0).UTC(),
		Era: matrix.EraModules, CGO: true, Go: "go1.26.8", PauseImage: "pause:3.6", Series: matrix.Series{Build: "k118-build", Shim: "dockershim", Fixes: "k123-fixes"}}
	out := filepath.Join(dir, ShimFileName("1.23.17+k123-fixes"))
	o := Options{Release: r, Variant: matrix.Patched, Version: "1.23.17+k123-fixes", Binary: bin, SHA256: strings.Repeat("0", 64), Out: out}
	if err := BuildShim(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	list, _ := execx.Run(context.Background(), execx.Cmd{Name: "dpkg-deb", Args: []string{"-c", out}})
	for _, p := range []string{ShimBinPath, ShimUnitPath, ShimDefaultPath} {
		if !strings.Contains(string(list), "./"+p+"\n") {
			t.Errorf("%s does not install /%s:\n%s", filepath.Base(out), p, list)
		}
	}
	conf, _ := execx.Run(context.Background(), execx.Cmd{Name: "dpkg-deb", Args: []string{"--ctrl-tarfile", out}})
	if !strings.Contains(string(conf), "/"+ShimDefaultPath) {
		t.Errorf("/%s is not a conffile", ShimDefaultPath)
	}
	if _, err := CheckShim(context.Background(), out, o.Version, strings.TrimSpace(string(want)), newest, dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	// A shim whose postinst starts it: on a node whose kubelet 1.23
	// serves its own dockershim, two would serve one socket.
	c := contents{files: map[string]file{ShimBinPath: {src: bin, mode: 0o755}, ShimUnitPath: {data: []byte("[Unit]\n"), mode: 0o644}},
		scripts: map[string]string{"postinst": "#!/bin/sh\nsystemctl start dockershim.service\n"}}
	if err := build(context.Background(), o, c, func(int64) string {
		return "Package: dockershim\nVersion: " + o.Version + "\nArchitecture: amd64\nMaintainer: x <x@x.invalid>\nDescription: x\n x\n"
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckShim(context.Background(), out, o.Version, strings.TrimSpace(string(want)), newest, dir, io.Discard); err == nil || !strings.Contains(err.Error(), "must start nothing") {
		t.Errorf("a shim package that starts the shim passed: %v", err)
	}
}
