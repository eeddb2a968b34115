package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/schemagen"
)

func newGenSchemaCmd(s Streams, g *globals) *cobra.Command {
	var version, out string
	var check bool
	cmd := &cobra.Command{
		Use:   "gen-hash-schema",
		Short: "Generate an older release's v1.Container type graph (for the legacy container hash) from that release's own source",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if check {
				n, err := schemagen.Check(cmd.Context(), version, out)
				if err == nil {
					fmt.Fprintf(s.Out, "%s: up to date (%d types)\n", out, n)
				}
				return err
			}
			n, id, err := schemagen.Write(cmd.Context(), version, out)
			if err == nil {
				fmt.Fprintf(s.Out, "wrote %s (%d types from %s)\n", out, n, id)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&version, "module-version", "", "k8s.io/kubernetes version to read, e.g. v1.7.5")
	cmd.Flags().StringVar(&out, "out", "", "file to write")
	cmd.Flags().BoolVar(&check, "check", false, "fail if the file differs from what would be generated")
	return cmd
}
