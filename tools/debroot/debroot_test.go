package debroot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMirror(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "sources.list")
	os.WriteFile(list, []byte("# comment\ndeb-src http://src.example/debian bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] http://one.example/debian bookworm main contrib\n"), 0o644)
	sources := filepath.Join(dir, "debian.sources")
	os.WriteFile(sources, []byte("Types: deb\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\nComponents: main\n\nTypes: deb\nURIs: http://two.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n"), 0o644)
	missing := filepath.Join(dir, "nope.list")
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{missing, list, sources}, "http://one.example/debian"},
		{[]string{sources, list}, "http://two.example/debian"},
	} {
		got, err := Mirror(tc.files, "bookworm")
		if err != nil || got != tc.want {
			t.Errorf("%v: got %q, %v; want %q", tc.files, got, err, tc.want)
		}
	}
	if _, err := Mirror([]string{sources}, "trixie"); err == nil || !strings.Contains(err.Error(), "trixie") {
		t.Errorf("want an error naming the suite, got %v", err)
	}
}

func TestKey(t *testing.T) {
	k := Key([]string{"a", "b"}, "minbase", "bookworm", []byte("Date: x"))
	for _, other := range []string{
		Key([]string{"a", "b", "c"}, "minbase", "bookworm", []byte("Date: x")),
		Key([]string{"a", "b"}, "minbase", "bookworm", []byte("Date: y")),
		Key([]string{"a", "b"}, "apt", "bookworm", []byte("Date: x")),
	} {
		if other == k {
			t.Errorf("key %s did not change", k)
		}
	}
	if k != Key([]string{"a", "b"}, "minbase", "bookworm", []byte("Date: x")) {
		t.Error("key not stable")
	}
}
