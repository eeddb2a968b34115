package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/testfile"
)

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestReplaceDir(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "gopath")

	// Into an empty place.
	src := filepath.Join(dir, ".tmp-1")
	testfile.Write(t, filepath.Join(src, "f"), "one")
	if err := ReplaceDir(src, dst); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dst, "f")) != "one" {
		t.Error("first tree not in place")
	}

	// Over an existing tree, with a stale .old a killed run left.
	testfile.Write(t, filepath.Join(dst+".old", "stale"), "x")
	src = filepath.Join(dir, ".tmp-2")
	testfile.Write(t, filepath.Join(src, "g"), "two")
	if err := ReplaceDir(src, dst); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dst, "g")) != "two" {
		t.Error("second tree not in place")
	}
	if _, err := os.Stat(filepath.Join(dst, "f")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the old tree's files survived the replacement")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "gopath" {
		t.Errorf("left in %s: %v", dir, entries)
	}

	// A source that is not there changes nothing.
	if err := ReplaceDir(filepath.Join(dir, ".tmp-missing"), dst); err == nil {
		t.Error("missing source accepted")
	}
	if read(t, filepath.Join(dst, "g")) != "two" {
		t.Error("a failed replacement lost the tree")
	}
}

// ReplaceDir also removes an old tree with read-only directories, as the
// go command leaves in a module cache.
func TestReplaceDirReadOnlyOld(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "gopath")
	testfile.Write(t, filepath.Join(dst, "pkg", "mod", "f"), "ro")
	if err := os.Chmod(filepath.Join(dst, "pkg", "mod"), 0o555); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, ".tmp")
	testfile.Write(t, filepath.Join(src, "f"), "new")
	if err := ReplaceDir(src, dst); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dst + ".old"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only old tree left: %v", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "CHECKSUMS")
	if err := WriteFileAtomic(path, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("second\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "second\n" {
		t.Errorf("content %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}

	// A failed write leaves the old file and no temporary one.
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if os.Getuid() != 0 { // root writes into read-only directories
		if err := WriteFileAtomic(path, []byte("third\n"), 0o644); err == nil {
			t.Error("write into a read-only directory succeeded")
		}
	}
	if got := read(t, path); got != "second\n" {
		t.Errorf("a failed write changed the file: %q", got)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "no", "such", "dir"), []byte("x"), 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

func TestCopyDir(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "out")
	testfile.Write(t, filepath.Join(src, "a.go"), "a")
	testfile.Write(t, filepath.Join(src, "a_test.go"), "t")
	testfile.Write(t, filepath.Join(src, "sub", "b.go"), "b")
	if err := os.Chmod(filepath.Join(src, "a.go"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CopyDir(src, dst, false, IsTestFile); err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(dst, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dst, path)
			got = append(got, rel)
		}
		return nil
	})
	if strings.Join(got, " ") != "a.go" {
		t.Errorf("copied %v, want only a.go (not recursive, no tests)", got)
	}
	if fi, _ := os.Stat(filepath.Join(dst, "a.go")); fi.Mode().Perm() != 0o755 {
		t.Errorf("executable bit lost: %v", fi.Mode())
	}
	if err := CopyDir(src, dst, true, nil); err == nil {
		t.Error("copy over existing files succeeded (CopyFile must not overwrite)")
	}
}

// A second Lock on the same file waits (and says so) until the first is
// released.
func TestLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := Lock(path, func() { t.Error("the first Lock waited") })
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	got := make(chan func())
	go func() {
		u, err := Lock(path, func() { close(waited) })
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	<-waited
	select {
	case <-got:
		t.Fatal("the second Lock did not wait for the first")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	if u := <-got; u != nil {
		u()
	}
}

func TestMountsUnder(t *testing.T) {
	info := []byte(`22 1 8:1 / / rw - ext4 /dev/vda rw
101 22 0:50 / /repo/_output/rehearsal/nodes/node-1/kubelet rw - tmpfs tmpfs rw
102 101 0:51 / /repo/_output/rehearsal/nodes/node-1/kubelet/pods/x\040y/volumes rw - tmpfs tmpfs rw
103 22 0:52 / /repo/_output2/other rw - tmpfs tmpfs rw
104 22 0:53 / /repo/_output rw - tmpfs tmpfs rw
`)
	got := MountsUnder(info, "/repo/_output/")
	want := []string{"/repo/_output/rehearsal/nodes/node-1/kubelet/pods/x y/volumes", "/repo/_output/rehearsal/nodes/node-1/kubelet", "/repo/_output"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("MountsUnder = %q, want %q", got, want)
	}
	if got := MountsUnder(info, "/elsewhere"); len(got) != 0 {
		t.Errorf("MountsUnder(/elsewhere) = %q", got)
	}
}
