package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/identity/schemagen"
)

func newGenSchemaCmd(s Streams, g *globals) *cobra.Command {
	var version, out, schema string
	var check bool
	cmd := &cobra.Command{
		Use:   "gen-hash-schema",
		Short: "Generate an older release's v1.Container type graph (legacy container hash) or internal Pod graph (legacy static pod UID) from that release's own source, as Go >= 1.9 or as its official go1.8.3 build prints it",
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := schemagen.SchemaNamed(schema)
			if err != nil {
				return err
			}
			if check {
				n, err := sc.Check(cmd.Context(), version, out)
				if err == nil {
					fmt.Fprintf(s.Out, "%s: up to date (%d types)\n", out, n)
				}
				return err
			}
			n, id, err := sc.Write(cmd.Context(), version, out)
			if err == nil {
				fmt.Fprintf(s.Out, "wrote %s (%d types from %s)\n", out, n, id)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&version, "module-version", "", "k8s.io/kubernetes version to read, e.g. v1.7.5")
	cmd.Flags().StringVar(&out, "out", "", "file to write")
	cmd.Flags().StringVar(&schema, "schema", "", `graph to generate: "" (core/v1 Container), internal-pod (pkg/api Pod, <= 1.7), internal-core-pod (pkg/apis/core Pod, 1.9 and later), or container-official, internal-pod-official, meta-official (the same in go1.8.3's runtime layouts)`)
	cmd.Flags().BoolVar(&check, "check", false, "fail if the file differs from what would be generated")
	return cmd
}
