package dist

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Entry is one member of a reproducible tarball. Exactly one of Src (a
// regular file on disk), Data (in-memory contents), Link (a symlink
// target) is used, or none for a directory (Dir).
type Entry struct {
	// Name is the member path inside the tarball, slash-separated, without
	// a leading slash; directories are written with a trailing slash.
	Name string
	Dir  bool
	Src  string
	Data []byte
	Link string
	// Exec marks a file 0755 instead of 0644.
	Exec bool
}

// Tarball collects entries and writes them as a reproducible .tar.gz:
// entries sorted by name, every mtime the release's build date, owner
// root:root (uid/gid 0), modes normalized to 0644/0755, and a gzip header
// without name or time.
type Tarball struct {
	entries map[string]Entry
}

// NewTarball returns an empty tarball.
func NewTarball() *Tarball { return &Tarball{entries: map[string]Entry{}} }

// Add adds e and every parent directory it needs; adding a name twice is an
// error.
func (t *Tarball) Add(e Entry) error {
	e.Name = strings.TrimSuffix(path.Clean(e.Name), "/")
	if e.Name == "." || strings.HasPrefix(e.Name, "../") || path.IsAbs(e.Name) {
		return fmt.Errorf("tarball member %q is outside the archive", e.Name)
	}
	if old, ok := t.entries[e.Name]; ok {
		if old.Dir && e.Dir {
			return nil
		}
		return fmt.Errorf("tarball member %s added twice", e.Name)
	}
	t.entries[e.Name] = e
	for d := path.Dir(e.Name); d != "."; d = path.Dir(d) {
		if old, ok := t.entries[d]; ok {
			if !old.Dir {
				return fmt.Errorf("tarball member %s is both a file and a directory", d)
			}
			break
		}
		t.entries[d] = Entry{Name: d, Dir: true}
	}
	return nil
}

// AddFile adds the regular file src as name, keeping its executable bit.
func (t *Tarball) AddFile(name, src string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	return t.Add(Entry{Name: name, Src: src, Exec: fi.Mode()&0o111 != 0})
}

// AddTree adds everything under dir as prefix/...: regular files,
// directories and symlinks (kept as symlinks, with their targets as they
// are). Other file types are an error. skip, if set, drops a path
// (relative to dir, slash-separated) and, for a directory, all below it.
func (t *Tarball) AddTree(prefix, dir string, skip func(rel string, d fs.DirEntry) bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." && skip != nil && skip(rel, d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		name := path.Join(prefix, rel)
		switch {
		case d.IsDir():
			if name == "." {
				return nil
			}
			return t.Add(Entry{Name: name, Dir: true})
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return t.Add(Entry{Name: name, Link: target})
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return t.Add(Entry{Name: name, Src: p, Exec: fi.Mode()&0o111 != 0})
		default:
			return fmt.Errorf("%s: not a regular file, directory or symlink", p)
		}
	})
}

// Names returns the member names in archive order.
func (t *Tarball) Names() []string {
	names := make([]string, 0, len(t.entries))
	for n := range t.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Write writes the tarball to dst (atomically, via a temporary file next
// to it) with every member's mtime set to mtime.
func (t *Tarball) Write(dst string, mtime time.Time) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err := t.write(bw, mtime); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

func (t *Tarball) write(w io.Writer, mtime time.Time) error {
	// No name, no time, default OS byte: the gzip stream depends only on
	// the tar stream (and the compress/gzip version).
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	mtime = mtime.UTC().Truncate(time.Second)
	for _, name := range t.Names() {
		e := t.entries[name]
		h := &tar.Header{
			Name:    name,
			ModTime: mtime,
			Mode:    0o644,
			Uid:     0,
			Gid:     0,
			Uname:   "root",
			Gname:   "root",
			// USTAR where the name fits, else PAX: chosen from the header
			// alone, so the same entries always give the same bytes.
			Format: tar.FormatUnknown,
		}
		if e.Exec {
			h.Mode = 0o755
		}
		switch {
		case e.Dir:
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, name+"/", 0o755
		case e.Link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.Link, 0o777
		default:
			h.Typeflag = tar.TypeReg
		}
		if err := writeMember(tw, h, e); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeMember writes one header and, for a regular file, its contents.
func writeMember(tw *tar.Writer, h *tar.Header, e Entry) error {
	if h.Typeflag != tar.TypeReg {
		return tw.WriteHeader(h)
	}
	if e.Src == "" {
		h.Size = int64(len(e.Data))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(e.Data)
		return err
	}
	f, err := os.Open(e.Src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	h.Size = fi.Size()
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	if n, err := io.Copy(tw, f); err != nil {
		return err
	} else if n != h.Size {
		return fmt.Errorf("%s changed size while being archived", e.Src)
	}
	return nil
}
