package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/smoke"
)

func newSmokeCmd(s Streams, g *globals) *cobra.Command {
	f := &buildFlags{}
	cmd := &cobra.Command{
		Use:   "smoke",
		Short: "Check a built kubelet: its version, and that it starts cAdvisor and dials Docker",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, r, v, err := f.resolve(g)
			if err != nil {
				return err
			}
			bin := build.PathsFor(m.OutputDir(), r.Release, v).Binary
			rep, err := smoke.Run(cmd.Context(), bin, r.GitVersion(v), filepath.Join(m.Root, "scripts", "node", "shadow-sysctls.sh"), time.Minute)
			if err != nil {
				return fmt.Errorf("smoke test of %s: %w", bin, err)
			}
			fmt.Fprintf(s.Out, "ok  %s: version %s, cAdvisor started, dialled its runtime endpoint\n", bin, rep.Version)
			return nil
		},
	}
	f.register(cmd.Flags(), "release")
	return cmd
}
