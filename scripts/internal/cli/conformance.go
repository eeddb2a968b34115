package cli

import (
	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/pipeline/build"
)

func newConformanceSuiteCmd(s Streams, g *globals) *cobra.Command {
	var release, sourceZip string
	cmd := &cobra.Command{
		Use:   "conformance-suite",
		Short: "Build upstream's node conformance suite, e2e_node.test, from a release's control-plane tree plus its conformance series",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, r, err := g.release(release)
			if err != nil {
				return err
			}
			if err := build.ConformanceSupported(m, r); err != nil {
				return err
			}
			o, err := buildOptions(s, m, r, sourceZip)
			if err != nil {
				return err
			}
			_, err = buildTarget(cmd.Context(), s, o, build.ConformanceTarget(cmd.Context(), o), r.ConformanceGitVersion(), true)
			return err
		},
	}
	cmd.Flags().StringVar(&release, "release", "", "release whose suite to build, e.g. 1.9.11")
	cmd.Flags().StringVar(&sourceZip, "source-zip", "", "use this k8s.io/kubernetes module zip instead of downloading it (must hash to the pinned sum)")
	return cmd
}
