package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/pipeline/build"
)

type controlPlaneFlags struct {
	release, sourceZip string
	check              bool
}

func newControlPlaneCmd(s Streams, g *globals) *cobra.Command {
	f := &controlPlaneFlags{}
	cmd := &cobra.Command{
		Use:   "control-plane",
		Short: "Build a release's kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kube-proxy (vanilla tree + control-plane series)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, r, err := g.release(f.release)
			if err != nil {
				return err
			}
			if err := build.ControlPlaneSupported(m, r); err != nil {
				return err
			}
			o, err := buildOptions(s, m, r, f.sourceZip)
			if err != nil {
				return err
			}
			t := build.ControlPlaneTarget(cmd.Context(), o)
			if f.check {
				return checkControlPlane(cmd, s, t, r.ControlPlaneGitVersion(), r.GitCommit)
			}
			_, err = buildTarget(cmd.Context(), s, o, t, r.ControlPlaneGitVersion(), true)
			return err
		},
	}
	cmd.Flags().StringVar(&f.release, "release", "", "release whose control plane to build, e.g. 1.9.11")
	cmd.Flags().StringVar(&f.sourceZip, "source-zip", "", "use this k8s.io/kubernetes module zip instead of downloading it (must hash to the pinned sum)")
	cmd.Flags().BoolVar(&f.check, "check", false, "build nothing: check that each built binary runs and reports the stamped version and the official commit")
	return cmd
}

// checkControlPlane runs each built binary's own check (its version).
func checkControlPlane(cmd *cobra.Command, s Streams, t *build.Target, version, commit string) error {
	for _, out := range t.Outputs {
		bin := t.Paths.In(out.Name)
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s is not built (make control-plane VERSION=...): %w", out.Name, err)
		}
		if err := out.Check(cmd.Context(), bin); err != nil {
			return err
		}
		fmt.Fprintf(s.Out, "ok  %s: %s, commit %s\n", bin, version, commit)
	}
	return nil
}
