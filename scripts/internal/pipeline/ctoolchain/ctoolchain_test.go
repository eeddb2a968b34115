package ctoolchain

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// npmTarball writes a package tarball the way npm pack lays one out.
func npmTarball(t *testing.T, path string, members map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range members {
		mode := int64(0o644)
		if strings.HasSuffix(name, "/zig") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(data))
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(buf.Bytes())
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func TestEnsureUnpacksAVerifiedTarball(t *testing.T) {
	out := t.TempDir()
	c := matrix.CToolchain{NPM: "@scope/zig-x@0.11.0", GlibcFloor: "2.17"}
	os.MkdirAll(filepath.Dir(Tarball(out, c)), 0o755)
	c.Integrity = npmTarball(t, Tarball(out, c), map[string]string{"package/zig": "#!/bin/sh\n", "package/lib/libc/glibc/abilists": "x"})
	dir, err := Ensure(context.Background(), out, c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(out, "scope-zig-x-0.11.0") {
		t.Errorf("dir %s", dir)
	}
	if fi, err := os.Stat(Zig(dir)); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("zig not unpacked executable: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lib", "libc", "glibc", "abilists")); err != nil {
		t.Error(err)
	}
	env := strings.Join(Env(dir, c), "\n")
	if !strings.Contains(env, "CC="+Zig(dir)+" cc -target x86_64-linux-gnu.2.17\n") {
		t.Errorf("env:\n%s", env)
	}
}

func TestVerifyRefusesAnotherTarball(t *testing.T) {
	dir := t.TempDir()
	c := matrix.CToolchain{NPM: "@scope/zig-x@0.11.0", GlibcFloor: "2.17"}
	c.Integrity = npmTarball(t, filepath.Join(dir, "a.tgz"), map[string]string{"package/zig": "one"})
	npmTarball(t, filepath.Join(dir, "b.tgz"), map[string]string{"package/zig": "two"})
	if err := Verify(filepath.Join(dir, "a.tgz"), c); err != nil {
		t.Fatal(err)
	}
	err := Verify(filepath.Join(dir, "b.tgz"), c)
	if err == nil || !strings.Contains(err.Error(), "b.tgz") || !strings.Contains(err.Error(), c.Integrity) {
		t.Fatalf("a tarball with another sha512: %v", err)
	}
}

func TestUnpackRefusesEscapes(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"package/../../evil", "other/zig", "/abs"} {
		tgz := filepath.Join(dir, "x.tgz")
		npmTarball(t, tgz, map[string]string{name: "x"})
		if err := unpack(tgz, t.TempDir()); err == nil {
			t.Errorf("member %q unpacked", name)
		}
	}
}
