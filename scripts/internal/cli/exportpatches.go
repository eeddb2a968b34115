package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/packaging/quilt"
)

type exportPatchesFlags struct {
	buildFlags
	out string
}

func newExportPatchesCmd(s Streams, g *globals) *cobra.Command {
	f := &exportPatchesFlags{}
	cmd := &cobra.Command{
		Use:   "export-patches",
		Short: "Write the series a release applies as quilt patches (series file + patches; overlay files as added-file patches)",
		RunE: func(*cobra.Command, []string) error {
			if f.out == "" {
				return fmt.Errorf("no output directory given (OUT=...)")
			}
			m, r, v, err := f.resolve(g)
			if err != nil {
				return err
			}
			set, err := quilt.Export(m.Root, r, v)
			if err != nil {
				return err
			}
			if len(set.Patches) == 0 {
				return fmt.Errorf("release %s %s applies no series: nothing to export", r.Release, v)
			}
			if err := set.Write(f.out); err != nil {
				return err
			}
			out, _ := filepath.Abs(f.out)
			fmt.Fprintf(s.Out, "%s: series file and %d patches (%v) for %s %s; apply in order with -p1 (quilt push -a, or debian/patches)\n", out, len(set.Patches), set.Series, r.Release, v)
			return nil
		},
	}
	f.register(cmd.Flags(), "release whose series to export")
	cmd.Flags().StringVar(&f.out, "out", "", "directory to write (created; an earlier export in it is replaced)")
	return cmd
}
