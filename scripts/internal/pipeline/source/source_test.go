package source

import (
	"archive/zip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// fakeRelease writes a small k8s.io/kubernetes module zip and a release
// pinned to its hash.
func fakeRelease(t *testing.T) (string, *matrix.Release) {
	t.Helper()
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "cmd", "kubelet"), 0o755)
	os.WriteFile(filepath.Join(src, "cmd", "kubelet", "kubelet.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.WriteFile(filepath.Join(src, "README.md"), []byte("kubernetes\n"), 0o644)
	zipPath := filepath.Join(t.TempDir(), "v1.99.0.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.CreateFromDir(f, module.Version{Path: ModulePath, Version: "v1.99.0"}, src); err != nil {
		t.Fatal(err)
	}
	f.Close()
	sum, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return zipPath, &matrix.Release{Release: "1.99.0", ModuleSum: sum, BuildDate: time.Now()}
}

func TestVerifyAcceptsPinnedZip(t *testing.T) {
	zipPath, r := fakeRelease(t)
	if err := Verify(zipPath, r); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(t.TempDir(), "k")
	if err := Extract(zipPath, tree, r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tree, "cmd", "kubelet", "kubelet.go")); err != nil {
		t.Fatal(err)
	}
}

// A zip whose README was rewritten (same name, same size) no longer hashes
// to the pinned sum.
func TestVerifyRefusesTamperedZip(t *testing.T) {
	zipPath, r := fakeRelease(t)
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tampered := filepath.Join(t.TempDir(), "tampered.zip")
	out, err := os.Create(tampered)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	rewrote := false
	for _, f := range zr.File {
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		data := []byte("kuberneteS\n")
		if !strings.HasSuffix(f.Name, "/README.md") {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err = io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
		} else {
			rewrote = true
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out.Close()
	if !rewrote {
		t.Fatal("the fake zip has no README.md")
	}
	err = Verify(tampered, r)
	if !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("tampered zip: err = %v, want ErrHashMismatch", err)
	}
	if !strings.Contains(err.Error(), tampered) {
		t.Errorf("error does not name the zip: %v", err)
	}
	if err := Verify(zipPath, r); err != nil {
		t.Errorf("the original zip is refused too: %v", err)
	}
}

func TestVerifyRefusesWrongPin(t *testing.T) {
	zipPath, r := fakeRelease(t)
	r.ModuleSum = "h1:ec9QXVi9GqQEYv7BI1facZCkGoJxYVktsHlopJ9ASv8="
	err := Verify(zipPath, r)
	if !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("zip of another release accepted: %v", err)
	}
	for _, w := range []string{zipPath, "1.99.0", r.ModuleSum} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
}

func TestOfficialGo(t *testing.T) {
	for version, want := range map[string]string{
		"v1.10.8-1\n": "go1.10.8", "v1.8.3-2": "go1.8.3", "v1.15.15-1": "go1.15.15",
		"v1.15.15-legacy-1\n": "go1.15.15", "v1.15.15-legacy": "", "v1.15.15-buster-1": "",
		"v1.21.0-go1.16.15-buster.0\n": "go1.16.15", "v1.23.0-go1.19.6-bullseye.0": "go1.19.6",
		"go1.10.8": "", "v1.10.8": "", "v1.21.0-go1.16.15": "", "v1.21.0-1.16.15-buster.0": "",
	} {
		tree := t.TempDir()
		if err := os.MkdirAll(filepath.Join(tree, filepath.Dir(crossVersion)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, crossVersion), []byte(version), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := OfficialGo(tree)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("VERSION %q: %q, %v; want %q", version, got, err, want)
		}
	}
	if _, err := OfficialGo(t.TempDir()); err == nil {
		t.Error("a tree without kube-cross VERSION gave an official Go")
	}
}
