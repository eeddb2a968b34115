package gomod

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

func TestVerifyDirDetectsCorruption(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "m.go"), []byte("package m\n"), 0o644)
	sum, err := dirhash.HashDir(dir, "example.com/m@v1.0.0", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyDir(dir, "example.com/m", "v1.0.0", sum); err != nil {
		t.Fatalf("intact module rejected: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "m.go"), []byte("package m // changed\n"), 0o644)
	if err := VerifyDir(dir, "example.com/m", "v1.0.0", sum); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("changed file not detected: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "m.go"), []byte("package m\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "extra.go"), []byte("package m\n"), 0o644)
	if err := VerifyDir(dir, "example.com/m", "v1.0.0", sum); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("added file not detected: %v", err)
	}
}

func TestAddedLines(t *testing.T) {
	got := AddedLines([]byte("a 1 h1:x\nb 1 h1:y\n"), []byte("a 1 h1:x\nc 1 h1:z\nb 1 h1:y\n"))
	if len(got) != 1 || got[0] != "c 1 h1:z" {
		t.Fatalf("got %q", got)
	}
}
