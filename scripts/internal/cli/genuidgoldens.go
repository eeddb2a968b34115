package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/podhash"
)

func newGenUIDGoldensCmd(s Streams, g *globals) *cobra.Command {
	var version, dir string
	var check bool
	cmd := &cobra.Command{
		Use:   "gen-uid-goldens",
		Short: "Write what the official go1.8.3-built 1.7 kubelet derives (static pod UIDs, container hashes) for the test manifests: the release's own dumps rewritten into go1.8.3's layout",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, r, err := g.release(version)
			if err != nil {
				return err
			}
			files, err := podhash.GenGoldens(cmd.Context(), m, r, dir, s.Err)
			if err != nil {
				return err
			}
			if err := podhash.WriteGoldens(dir, files, check); err != nil {
				return err
			}
			if check {
				fmt.Fprintf(s.Out, "%s: up to date (%d files)\n", dir, len(files))
			} else {
				fmt.Fprintf(s.Out, "wrote %s and the dumps beside it (%d files)\n", filepath.Join(dir, podhash.GoldensFile), len(files))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&version, "version", podhash.GoldensRelease, "the 1.7 release whose vanilla helper dumps the manifests")
	cmd.Flags().StringVar(&dir, "dir", podhash.GoldensDir, "directory of *.yaml and *.json manifests; goldens.json is written there")
	cmd.Flags().BoolVar(&check, "check", false, "fail if goldens.json differs from what would be written")
	return cmd
}
