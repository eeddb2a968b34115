package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/identity/podhash"
)

func newGenUIDGoldensCmd(s Streams, g *globals) *cobra.Command {
	var versions []string
	var dir string
	var check bool
	cmd := &cobra.Command{
		Use:   "gen-uid-goldens",
		Short: "Write what the official go1.8.3-built 1.7 and 1.8 kubelets derive (static pod UIDs, container hashes) for the test manifests: each release's own dumps rewritten into go1.8.3's layout",
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, version := range versions {
				m, r, err := g.release(version)
				if err != nil {
					return err
				}
				files, err := podhash.GenGoldens(cmd.Context(), m, r, dir, s.Err)
				if err != nil {
					return err
				}
				out := podhash.GoldensOut(dir, r)
				if err := podhash.WriteGoldens(out, files, check); err != nil {
					return err
				}
				if check {
					fmt.Fprintf(s.Out, "%s: up to date (%d files)\n", out, len(files))
				} else {
					fmt.Fprintf(s.Out, "wrote %s and the dumps beside it (%d files)\n", filepath.Join(out, podhash.GoldensFile), len(files))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&versions, "version", podhash.GoldensReleases, "the releases (one per go1.8.3-built minor line) whose vanilla helpers dump the manifests")
	cmd.Flags().StringVar(&dir, "dir", podhash.GoldensDir, "directory of *.yaml and *.json manifests; each release's goldens.json is written to <dir>/<minor>/")
	cmd.Flags().BoolVar(&check, "check", false, "fail if a goldens.json differs from what would be written")
	return cmd
}
