package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/build"
	"kubelet-toolchain/scripts/internal/execx"
	"kubelet-toolchain/scripts/internal/fsutil"
	"kubelet-toolchain/scripts/internal/matrix"
	"kubelet-toolchain/scripts/internal/patch"
)

func newBenchBuildCmd(s Streams, g *globals) *cobra.Command {
	var release, variant string
	cmd := &cobra.Command{
		Use:   "bench-build",
		Short: "Measure a cold build (fetch/restore/compile), a warm no-op, and the incremental-rebuild overhead",
		Long: `Builds the release from nothing into _output/bench with its own empty module
and build caches (a true cold build), then measures a warm no-op, then the
ratio of a toolchain rebuild after one patched file changed to a bare
go build of the same prepared tree after the same kind of change.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return benchBuild(cmd.Context(), s, g, release, variant)
		},
	}
	cmd.Flags().StringVar(&release, "release", "", "release, e.g. 1.9.11")
	cmd.Flags().StringVar(&variant, "variant", "patched", "patched or vanilla")
	return cmd
}

func benchBuild(ctx context.Context, s Streams, g *globals, release, variant string) error {
	m, r, v, err := g.build(release, variant)
	if err != nil {
		return err
	}
	bench := filepath.Join(m.Root, "_output", "bench")
	if err := fsutil.RemoveAll(bench); err != nil {
		return err
	}
	// Empty caches of our own make the first build truly cold; the go
	// commands the build runs inherit them.
	for k, dir := range map[string]string{"GOMODCACHE": "modcache", "GOCACHE": "gocache"} {
		if err := os.Setenv(k, filepath.Join(bench, dir)); err != nil {
			return err
		}
	}
	defer func() { execx.Run(context.Background(), execx.Cmd{Name: "go", Args: []string{"clean", "-modcache"}}) }()
	o := build.Options{Matrix: m, Release: r, Variant: v, OutputDir: bench, Log: s.Err}

	cold, err := timed(func() (*build.Result, error) { return build.Run(ctx, o) })
	if err != nil {
		return err
	}
	noop, err := timed(func() (*build.Result, error) { return build.Run(ctx, o) })
	if err != nil {
		return err
	}
	if !noop.res.UpToDate {
		return fmt.Errorf("second build was not a no-op")
	}

	// One file a patch of this variant touches, edited as a developer would.
	p := build.PathsFor(bench, r.Release, v)
	file, err := patchedFile(m.Root, r, v, p.Tree)
	if err != nil {
		return err
	}
	edit := func(n int) error {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(f, "\n// bench-build edit %d\n", n)
		return f.Close()
	}
	if err := edit(1); err != nil {
		return err
	}
	rebuild, err := timed(func() (*build.Result, error) { return build.Run(ctx, o) })
	if err != nil {
		return err
	}
	if err := edit(2); err != nil {
		return err
	}
	args, env := build.CompileCommand(r, v, p)
	bareStart := time.Now()
	if _, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: append(args, "-o", filepath.Join(bench, "bare-kubelet"), build.KubeletPackage(r)), Dir: build.BuildDir(r, p), Env: env}); err != nil {
		return err
	}
	bare := time.Since(bareStart)

	stage := map[string]time.Duration{}
	for _, t := range cold.res.Stages {
		stage[t.Stage] = t.Duration
	}
	fi, _ := os.Stat(p.Binary)
	w := s.Out
	fmt.Fprintf(w, "bench-build %s %s (%s)\n", r.Release, v, r.GitVersion(v))
	fmt.Fprintf(w, "  cold build (empty module and build caches): %s\n", cold.d.Round(100*time.Millisecond))
	fmt.Fprintf(w, "    fetch          %8s\n", stage["fetch"])
	fmt.Fprintf(w, "    restore        %8s\n", stage["restore"])
	fmt.Fprintf(w, "    patch          %8s\n", stage["patch"])
	fmt.Fprintf(w, "    compile+link   %8s\n", stage["compile"])
	fmt.Fprintf(w, "    checksum       %8s\n", stage["checksum"])
	fmt.Fprintf(w, "  binary size: %d bytes, sha256 %s\n", fi.Size(), cold.res.SHA256)
	fmt.Fprintf(w, "  warm no-op: %s (target < 2s)\n", noop.d.Round(time.Millisecond))
	rel, _ := filepath.Rel(p.Tree, file)
	fmt.Fprintf(w, "  rebuild after editing %s: toolchain %s, bare go build %s, ratio %.2f (target <= 1.10)\n",
		rel, rebuild.d.Round(100*time.Millisecond), bare.Round(100*time.Millisecond), rebuild.d.Seconds()/bare.Seconds())
	return nil
}

type timing struct {
	res *build.Result
	d   time.Duration
}

func timed(fn func() (*build.Result, error)) (timing, error) {
	start := time.Now()
	res, err := fn()
	return timing{res, time.Since(start)}, err
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
