// Package bench measures the toolchain: builds (make bench-build) and
// the container hash helper (make bench-hash).
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/patch"
	"kubelet-toolchain/tools/execx"
)

// BuildResult is what Build measured.
type BuildResult struct {
	Release *matrix.Release
	Variant matrix.Variant
	// Cold is the first build with empty caches, Stages its split.
	Cold   time.Duration
	Stages map[string]time.Duration
	Size   int64
	SHA256 string
	// NoOp is the warm re-run with nothing changed.
	NoOp time.Duration
	// Edited is the tree-relative file changed before Rebuild (the
	// toolchain) and Bare (go build alone, after the same kind of edit).
	Edited        string
	Rebuild, Bare time.Duration
}

// Build builds o's release from nothing into o.OutputDir (removed first)
// with its own empty module and build caches, then measures a warm no-op,
// then a toolchain rebuild after one patched file changed against a bare
// go build of the same prepared tree after the same kind of change.
//
// The caches are set in the process environment (every go command the
// build runs inherits them) and the module cache is removed at the end.
func Build(ctx context.Context, o build.Options) (*BuildResult, error) {
	r, v := o.Release, o.Variant
	if err := fsutil.RemoveAll(o.OutputDir); err != nil {
		return nil, err
	}
	for k, dir := range map[string]string{"GOMODCACHE": "modcache", "GOCACHE": "gocache"} {
		if err := os.Setenv(k, filepath.Join(o.OutputDir, dir)); err != nil {
			return nil, err
		}
	}
	defer execx.Run(context.WithoutCancel(ctx), execx.Cmd{Name: "go", Args: []string{"clean", "-modcache"}})
	res := &BuildResult{Release: r, Variant: v, Stages: map[string]time.Duration{}}
	timed := func(d *time.Duration) (*build.Result, error) {
		start := time.Now()
		built, err := build.Kubelet(ctx, o)
		*d = time.Since(start)
		return built, err
	}
	cold, err := timed(&res.Cold)
	if err != nil {
		return nil, err
	}
	for _, t := range cold.Stages {
		res.Stages[t.Stage] = t.Duration
	}
	res.SHA256 = cold.SHA256["kubelet"]
	if noop, err := timed(&res.NoOp); err != nil {
		return nil, err
	} else if !noop.UpToDate {
		return nil, fmt.Errorf("second build was not a no-op")
	}

	// One file a patch of this variant touches, edited as a developer would.
	p := build.PathsFor(o.OutputDir, r.Release, v)
	file, err := patchedFile(o.Matrix.Root, r, v, p.Tree)
	if err != nil {
		return nil, err
	}
	res.Edited, _ = filepath.Rel(p.Tree, file)
	edit := func(n int) error {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(f, "\n// bench-build edit %d\n", n)
		return f.Close()
	}
	if err := edit(1); err != nil {
		return nil, err
	}
	if _, err := timed(&res.Rebuild); err != nil {
		return nil, err
	}
	if err := edit(2); err != nil {
		return nil, err
	}
	args, env := build.CompileCommand(r, v, p)
	if err := build.EnsureCToolchain(ctx, r, p, env, io.Discard); err != nil {
		return nil, err
	}
	start := time.Now()
	if _, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: append(args, "-o", filepath.Join(o.OutputDir, "bare-kubelet"), build.KubeletPackage(r)), Dir: build.BuildDir(r, p), Env: env}); err != nil {
		return nil, err
	}
	res.Bare = time.Since(start)
	fi, err := os.Stat(p.Binary)
	if err != nil {
		return nil, err
	}
	res.Size = fi.Size()
	return res, nil
}

// Write prints the report.
func (b *BuildResult) Write(w io.Writer) {
	fmt.Fprintf(w, "bench-build %s %s (%s)\n", b.Release.Release, b.Variant, b.Release.GitVersion(b.Variant))
	fmt.Fprintf(w, "  cold build (empty module and build caches): %s\n", b.Cold.Round(100*time.Millisecond))
	for _, s := range []struct{ label, stage string }{{"fetch", "fetch"}, {"restore", "restore"}, {"patch", "patch"}, {"compile+link", "compile"}, {"checksum", "checksum"}} {
		fmt.Fprintf(w, "    %-14s %8s\n", s.label, b.Stages[s.stage])
	}
	fmt.Fprintf(w, "  binary size: %d bytes, sha256 %s\n", b.Size, b.SHA256)
	fmt.Fprintf(w, "  warm no-op: %s (target < 2s)\n", b.NoOp.Round(time.Millisecond))
	fmt.Fprintf(w, "  rebuild after editing %s: toolchain %s, bare go build %s, ratio %.2f (target <= 1.10)\n",
		b.Edited, b.Rebuild.Round(100*time.Millisecond), b.Bare.Round(100*time.Millisecond), b.Rebuild.Seconds()/b.Bare.Seconds())
}

// patchedFile returns the tree path of the first Go file a patch of the
// variant's series modifies.
func patchedFile(root string, r *matrix.Release, v matrix.Variant, tree string) (string, error) {
	var files []string
	for _, name := range r.Series.For(v) {
		sr, err := patch.Load(root, name)
		if err != nil {
			return "", err
		}
		patched, err := sr.PatchedFiles()
		if err != nil {
			return "", err
		}
		for _, f := range patched {
			if strings.HasSuffix(f, ".go") {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		return "", fmt.Errorf("release %s %s: no patch modifies a Go file", r.Release, v)
	}
	sort.Strings(files)
	return filepath.Join(tree, filepath.FromSlash(files[0])), nil
}
