// Package fsutil holds the few file operations the build needs to be
// crash-safe: copying module files out of the read-only module cache and
// replacing a directory in one rename.
package fsutil

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// CopyFile copies src to dst with mode 0644 (or 0755 when src is executable).
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi.Mode()&0o111 != 0 {
		mode = 0o755
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// CopyDir copies the regular files of src into dst. With recursive it
// descends into subdirectories; skip, if set, drops files by name.
func CopyDir(src, dst string, recursive bool, skip func(name string) bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel != "." && !recursive {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || (skip != nil && skip(d.Name())) {
			return nil
		}
		return CopyFile(path, filepath.Join(dst, rel))
	})
}

// ReplaceDir moves the prepared directory src to dst, replacing any dst
// atomically enough that a crash leaves either the old or the new one
// (plus, at worst, a stale ".old" dir that the next run removes). When the
// move itself fails, the old dst is put back.
func ReplaceDir(src, dst string) error {
	old := dst + ".old"
	if err := RemoveAll(old); err != nil {
		return err
	}
	hadOld := false
	if _, err := os.Lstat(dst); err == nil {
		if err := os.Rename(dst, old); err != nil {
			return err
		}
		hadOld = true
	}
	if err := os.Rename(src, dst); err != nil {
		if hadOld {
			os.Rename(old, dst)
		}
		return fmt.Errorf("moving %s into place: %w", src, err)
	}
	return RemoveAll(old)
}

// RemoveAll removes a tree even where it has read-only directories.
func RemoveAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// IsTestFile reports whether name is a Go test file (not vendored).
func IsTestFile(name string) bool { return strings.HasSuffix(name, "_test.go") }

// WriteFileAtomic writes data to path via a temp file and a rename.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Lock takes an exclusive flock on path (created if missing), calling
// waiting first when another process holds it. The kernel drops the lock
// when the process dies, so a killed run never leaves it held.
func Lock(path string, waiting func()) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if waiting != nil {
			waiting()
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
	}
	return func() { f.Close() }, nil
}

// MountsUnder lists the mount points at or below dir in a mountinfo
// table (/proc/self/mountinfo), deepest first. Mount points there escape
// space, tab, newline and backslash in octal.
func MountsUnder(mountinfo []byte, dir string) []string {
	dir = filepath.Clean(dir)
	unescape := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	var out []string
	for _, line := range strings.Split(string(mountinfo), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if m := unescape.Replace(f[4]); m == dir || strings.HasPrefix(m, dir+"/") {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// UserCacheEnv overrides where UserCache keeps its directories.
const UserCacheEnv = "KUBELET_TOOLCHAIN_CACHE"

// UserCache is a directory for what every checkout of this user may share,
// beside Go's own caches: content-addressed downloads and builds (the C
// toolchain, the node image's root filesystem). $KUBELET_TOOLCHAIN_CACHE/
// name, else <user cache dir>/kubelet-toolchain/name. make clean leaves it.
func UserCache(name string) string {
	base := os.Getenv(UserCacheEnv)
	if base == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		base = filepath.Join(dir, "kubelet-toolchain")
	}
	return filepath.Join(base, name)
}
