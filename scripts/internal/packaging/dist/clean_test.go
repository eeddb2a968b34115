package dist

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// What killed runs left is removed once unchanged since the cutoff; lock
// files, other names, and anything changed since stay. A build date mtime
// (as the builds set) does not make a file old: its ctime is recent.
func TestCleanOlder(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]string{}
	for _, name := range []string{".rebuild-1", ".x.tar.gz.tmp-2", ".rpm-build-1.9.11+k19-fixes.lock", "kubelet.deb"} {
		paths[name] = filepath.Join(dir, name)
		if err := os.MkdirAll(paths[name], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	built := time.Date(2018, 9, 28, 21, 35, 22, 0, time.UTC)
	os.Chtimes(paths[".rebuild-1"], built, built)
	exists := func(name string) bool { _, err := os.Stat(paths[name]); return err == nil }

	cleanOlder(dir, time.Now().Add(-time.Hour), ".rebuild-*", ".*.tmp-*", ".rpm-*")
	if !exists(".rebuild-1") || !exists(".x.tar.gz.tmp-2") {
		t.Fatal("a scratch directory changed a moment ago (mtime at the build date) was removed")
	}
	cleanOlder(dir, time.Now().Add(time.Minute), ".rebuild-*", ".*.tmp-*", ".rpm-*")
	for name, want := range map[string]bool{".rebuild-1": false, ".x.tar.gz.tmp-2": false, ".rpm-build-1.9.11+k19-fixes.lock": true, "kubelet.deb": true} {
		if got := exists(name); got != want {
			t.Errorf("%s exists: %v, want %v", name, got, want)
		}
	}
}
