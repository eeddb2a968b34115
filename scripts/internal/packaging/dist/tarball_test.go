package dist

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeTree(t *testing.T, dir string, mtime time.Time) {
	t.Helper()
	for name, data := range map[string]string{"b/file.go": "package b\n", "a.txt": "a\n", "tool.sh": "#!/bin/sh\n"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o600)
		if name == "tool.sh" {
			mode = 0o700
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, mtime, mtime)
	}
	if err := os.Symlink("../b", filepath.Join(dir, "b", "link")); err != nil {
		t.Fatal(err)
	}
}

func writeTarball(t *testing.T, dir, dst string) {
	t.Helper()
	tb := NewTarball()
	if err := tb.Add(Entry{Name: "top/README", Data: []byte("hi\n")}); err != nil {
		t.Fatal(err)
	}
	if err := tb.AddTree("top/tree", dir, nil); err != nil {
		t.Fatal(err)
	}
	if err := tb.Write(dst, time.Date(2018, 9, 28, 21, 35, 22, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
}

func TestTarballReproducible(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	writeTree(t, a, time.Now())
	writeTree(t, b, time.Unix(0, 0))
	writeTarball(t, a, filepath.Join(tmp, "a.tar.gz"))
	writeTarball(t, b, filepath.Join(tmp, "b.tar.gz"))
	da, _ := os.ReadFile(filepath.Join(tmp, "a.tar.gz"))
	db, _ := os.ReadFile(filepath.Join(tmp, "b.tar.gz"))
	if !bytes.Equal(da, db) {
		t.Fatal("same contents with different mtimes, modes and paths gave different tarballs")
	}
	zr, err := gzip.NewReader(bytes.NewReader(da))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header has name %q, mtime %v", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var names []string
	want := map[string]struct {
		typ  byte
		mode int64
		link string
	}{
		"top/":               {tar.TypeDir, 0o755, ""},
		"top/README":         {tar.TypeReg, 0o644, ""},
		"top/tree/":          {tar.TypeDir, 0o755, ""},
		"top/tree/a.txt":     {tar.TypeReg, 0o644, ""},
		"top/tree/b/":        {tar.TypeDir, 0o755, ""},
		"top/tree/b/file.go": {tar.TypeReg, 0o644, ""},
		"top/tree/b/link":    {tar.TypeSymlink, 0o777, "../b"},
		"top/tree/tool.sh":   {tar.TypeReg, 0o755, ""},
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		w, ok := want[h.Name]
		if !ok {
			t.Errorf("unexpected member %s", h.Name)
			continue
		}
		if h.Typeflag != w.typ || h.Mode != w.mode || h.Linkname != w.link || h.Uid != 0 || h.Gid != 0 || h.Uname != "root" || !h.ModTime.Equal(time.Unix(1538170522, 0)) {
			t.Errorf("%s: type %c mode %o link %q uid %d gid %d uname %q mtime %v", h.Name, h.Typeflag, h.Mode, h.Linkname, h.Uid, h.Gid, h.Uname, h.ModTime)
		}
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("members not sorted: %s before %s", names[i-1], names[i])
		}
	}
	if len(names) != len(want) {
		t.Errorf("members %v", names)
	}
}

func TestTarballRejectsDuplicates(t *testing.T) {
	tb := NewTarball()
	if err := tb.Add(Entry{Name: "a/b", Data: nil}); err != nil {
		t.Fatal(err)
	}
	if err := tb.Add(Entry{Name: "a/b", Data: nil}); err == nil {
		t.Error("adding a/b twice succeeded")
	}
	if err := tb.Add(Entry{Name: "a/b/c", Data: nil}); err == nil {
		t.Error("a/b as both file and directory succeeded")
	}
	if err := tb.Add(Entry{Name: "../x"}); err == nil {
		t.Error("member outside the archive accepted")
	}
}
