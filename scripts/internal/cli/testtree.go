package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/treetest"
)

func newTestTreeCmd(s Streams, g *globals) *cobra.Command {
	var release, run, bench string
	cmd := &cobra.Command{
		Use:   "test-tree",
		Short: "Run the in-tree tests of every package the release's fixes series (and its shared legacy types overlay) touches, in the patched tree",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return testTree(cmd.Context(), s, g, release, run, bench)
		},
	}
	cmd.Flags().StringVar(&release, "release", "", "release, e.g. 1.9.11")
	cmd.Flags().StringVar(&run, "run", "", "only tests matching this regexp (go test -run)")
	cmd.Flags().StringVar(&bench, "bench", "", "also run benchmarks matching this regexp (go test -bench)")
	return cmd
}

// testTree runs the in-tree tests of the packages release's fixes touch,
// in its patched tree (prepared and built first, so the tests run against
// exactly what ships).
func testTree(ctx context.Context, s Streams, g *globals, release, run, bench string) error {
	m, r, err := g.release(release)
	if err != nil {
		return err
	}
	// The patched tree is prepared (and built) first, so the tests
	// run against exactly what ships.
	if _, err := buildKubelet(ctx, s, g, &kubeletFlags{buildFlags: buildFlags{r.Release, string(matrix.Patched)}}); err != nil {
		return err
	}
	if r.Series.Fixes == "" {
		return fmt.Errorf("release %s has no fixes series", r.Release)
	}
	// The fixes' packages, and the tests the build series lays in
	// (the official derivations); the build patches touch vendored
	// code whose own suites (ugorji's codec, for one) are not ours
	// to run.
	p := build.PathsFor(m.OutputDir(), r.Release, matrix.Patched)
	series := append(append([]string{}, r.Series.SharedFixes...), r.Series.Fixes)
	if r.Series.LegacyTypes != "" {
		// The shared layouts and static pod identity the fixes build on.
		series = append(series, r.Series.LegacyTypes)
	}
	if r.Series.LockFixes != "" {
		// What the lock's substitutions lose, put back and tested.
		series = append(series, r.Series.LockFixes)
	}
	if r.Series.Shim != "" {
		// cmd/dockershim's flags against the kubelet's.
		series = append(series, r.Series.Shim)
	}
	var overlayOnly []string
	if r.Series.Build != "" {
		overlayOnly = append(overlayOnly, r.Series.Build)
	}
	pkgs, err := treetest.Packages(m.Root, p.Tree, series, overlayOnly)
	if err != nil {
		return err
	}
	if len(pkgs) == 0 {
		return fmt.Errorf("release %s: series %s touches no package with tests", r.Release, r.Series.Fixes)
	}
	fmt.Fprintf(s.Err, "==> in-tree tests of %s patched: %s\n", r.Release, strings.Join(pkgs, " "))
	var extra []string
	if run != "" {
		extra = []string{"-run", run}
	}
	if bench != "" {
		extra = append(extra, "-bench", bench, "-benchmem")
	}
	if err := treetest.Run(ctx, r, matrix.Patched, p, pkgs, s.Out, extra...); err != nil {
		return fmt.Errorf("release %s: in-tree tests failed: %w", r.Release, err)
	}
	return nil
}
