// Package treetest runs the in-tree tests of every package a release's
// patch series touches, in the prepared (patched) tree, with the same
// environment the build uses.
package treetest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/patch"
	"kubelet-toolchain/tools/execx"
)

// Packages returns the tree-relative directories that the given series
// change (patched files and overlay files; of overlayOnly's series only
// the overlay files) and that hold Go tests.
func Packages(root, tree string, series, overlayOnly []string) ([]string, error) {
	dirs := map[string]bool{}
	patched := map[string]bool{}
	for _, name := range series {
		patched[name] = true
	}
	for _, name := range append(append([]string{}, series...), overlayOnly...) {
		s, err := patch.Load(root, name)
		if err != nil {
			return nil, err
		}
		if patched[name] {
			files, err := s.PatchedFiles()
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				dirs[filepath.Dir(f)] = true
			}
		}
		if s.Overlay != "" {
			files, err := s.Files()
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				if rel, err := filepath.Rel(s.Overlay, f); err == nil && !strings.HasPrefix(rel, "..") {
					dirs[filepath.Dir(rel)] = true
				}
			}
		}
	}
	var out []string
	for d := range dirs {
		if tests, _ := filepath.Glob(filepath.Join(tree, d, "*_test.go")); len(tests) > 0 {
			out = append(out, filepath.ToSlash(d))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Run runs `go test -vet=off` (old test code trips modern vet) for pkgs in
// the prepared tree p of release r with the kubelet's -ldflags, streaming
// output to w.
func Run(ctx context.Context, r *matrix.Release, v matrix.Variant, p build.Paths, pkgs []string, w io.Writer, extra ...string) error {
	compile, env := build.CompileCommand(r, v, p)
	if err := build.EnsureCToolchain(ctx, r, p, env, w); err != nil {
		return err
	}
	// -trimpath as the builds have it: Go's build cache keys a package
	// compiled without it by its directory, so a new checkout recompiled
	// every test binary's dependencies (1.22.17: 226 s against 19 s).
	// The suites' temporary files, and the klog files they write (the
	// temporary directory is klog's default), go to a directory of this
	// run's, removed after it, instead of piling up in the machine's. It
	// stays under the machine's temporary directory: the tests' unix
	// sockets (TMPDIR/<test name><n>/001/docker.sock) must fit the 108-byte
	// path limit, so its name is short.
	tmp, err := os.MkdirTemp("", "tree-test-")
	if err != nil {
		return fmt.Errorf("in-tree tests of %s: %w", r.Release, err)
	}
	defer os.RemoveAll(tmp)
	env = append(env, "TMPDIR="+tmp)
	args := []string{"test", "-trimpath", "-vet=off", "-count=1"}
	// The kubelet's own -ldflags and tags: the tests see the baselines it
	// stamps and the code the official build compiled.
	for i, a := range compile {
		if (a == "-ldflags" || a == "-tags") && i+1 < len(compile) {
			args = append(args, a, compile[i+1])
		}
	}
	args = append(args, extra...)
	for _, d := range pkgs {
		if r.Era == matrix.EraModules {
			args = append(args, "./"+d)
		} else {
			args = append(args, "k8s.io/kubernetes/"+d)
		}
	}
	_, err = execx.Run(ctx, execx.Cmd{Name: "go", Args: args, Dir: build.BuildDir(r, p), Env: env, Stdout: w})
	return err
}
