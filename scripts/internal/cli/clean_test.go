package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCleanable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "_output")
	proc := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := cleanable(out, nil, proc); err != nil {
		t.Fatalf("nothing there: %v", err)
	}
	// Another program, elsewhere: clean.
	write(filepath.Join(proc, "4242", "cmdline"), "/usr/bin/vim\x00notes\x00")
	if err := cleanable(out, nil, proc); err != nil {
		t.Fatalf("an unrelated process: %v", err)
	}
	// Our engine, running from it.
	write(filepath.Join(proc, "4343", "cmdline"), "/usr/sbin/dockerd\x00--config-file\x00"+filepath.Join(out, "engine", "daemon.json")+"\x00")
	err := cleanable(out, nil, proc)
	if err == nil || !strings.Contains(err.Error(), "pid 4343 (dockerd)") {
		t.Fatalf("running engine: %v", err)
	}
	os.RemoveAll(filepath.Join(proc, "4343"))
	// A build working in it (its command line names no path there).
	write(filepath.Join(proc, "4444", "cmdline"), "go\x00build\x00./cmd/kubelet\x00")
	if err := os.Symlink(filepath.Join(out, "1.12.10", "vanilla", "gopath"), filepath.Join(proc, "4444", "cwd")); err != nil {
		t.Fatal(err)
	}
	if err := cleanable(out, nil, proc); err == nil || !strings.Contains(err.Error(), "pid 4444 (go)") {
		t.Fatalf("a build in it: %v", err)
	}
	os.RemoveAll(filepath.Join(proc, "4444"))
	// A mount under it.
	mi := []byte("101 22 0:50 / " + filepath.Join(out, "rehearsal", "nodes", "node-1", "kubelet") + " rw - tmpfs tmpfs rw\n")
	err = cleanable(out, mi, proc)
	if err == nil || !strings.Contains(err.Error(), "1 mounts under it") || !strings.Contains(err.Error(), "node-1/kubelet") {
		t.Fatalf("mount: %v", err)
	}
}
