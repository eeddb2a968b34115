package source

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"

	"kubelet-toolchain/scripts/internal/matrix"
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
	return zipPath, &matrix.Release{Release: "1.99.0", ModuleVersion: "v1.99.0", ModuleSum: sum, BuildDate: time.Now()}
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

func TestVerifyRefusesTamperedZip(t *testing.T) {
	zipPath, r := fakeRelease(t)
	data, _ := os.ReadFile(zipPath)
	// Flip one byte of stored file content (the README is stored, not compressed).
	i := strings.Index(string(data), "kubernetes\n")
	if i < 0 {
		t.Skip("zip stores the file compressed; tamper by pinning another sum instead")
	}
	data[i] ^= 0x20
	tampered := filepath.Join(t.TempDir(), "tampered.zip")
	os.WriteFile(tampered, data, 0o644)
	err := Verify(tampered, r)
	if err == nil {
		t.Fatal("tampered zip accepted")
	}
	if !errors.Is(err, ErrHashMismatch) && !strings.Contains(err.Error(), "zip") {
		t.Fatalf("unexpected error: %v", err)
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
