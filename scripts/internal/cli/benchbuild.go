package cli

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/pipeline/bench"
	"kubelet-toolchain/scripts/internal/pipeline/build"
)

func newBenchBuildCmd(s Streams, g *globals) *cobra.Command {
	f := &buildFlags{}
	cmd := &cobra.Command{
		Use:   "bench-build",
		Short: "Measure a cold build (fetch/restore/compile), a warm no-op, and the incremental-rebuild overhead",
		Long: `Builds the release from nothing into _output/bench with its own empty module
and build caches (a true cold build), then measures a warm no-op, then the
ratio of a toolchain rebuild after one patched file changed to a bare
go build of the same prepared tree after the same kind of change.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, r, v, err := f.resolve(g)
			if err != nil {
				return err
			}
			res, err := bench.Build(cmd.Context(), build.Options{Matrix: m, Release: r, Variant: v, OutputDir: filepath.Join(m.OutputDir(), "bench"), Log: s.Err})
			if err != nil {
				return err
			}
			res.Write(s.Out)
			return nil
		},
	}
	f.register(cmd.Flags(), "release")
	return cmd
}
