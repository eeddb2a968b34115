package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/build"
	"kubelet-toolchain/scripts/internal/checksums"
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
			p := build.ControlPlanePathsFor(m.OutputDir(), r.Release)
			if f.check {
				return checkControlPlane(cmd, s, p, r.ControlPlaneGitVersion(), r.GitCommit)
			}
			zip := f.sourceZip
			if zip != "" {
				if zip, err = filepath.Abs(zip); err != nil {
					return err
				}
			}
			start := time.Now()
			res, err := build.RunControlPlane(cmd.Context(), build.Options{Matrix: m, Release: r, SourceZip: zip, Log: s.Err})
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(m.Root, p.Bin)
			if res.UpToDate {
				fmt.Fprintf(s.Err, "%s is up to date\n", rel)
			} else {
				printBuilt(s.Err, rel, r.ControlPlaneGitVersion(), start, "", res.Stages)
			}
			want, err := checksums.Load(filepath.Join(m.Root, checksums.FileName))
			if err != nil {
				return err
			}
			for _, c := range build.ControlPlaneCommands {
				key, sum := checksums.ControlPlaneKey(r.Release, c.Name), res.SHA256[c.Name]
				fmt.Fprintf(s.Out, "%s  %s\n", sum, key)
				want.Note(key, sum, s.Err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.release, "release", "", "release whose control plane to build, e.g. 1.9.11")
	cmd.Flags().StringVar(&f.sourceZip, "source-zip", "", "use this k8s.io/kubernetes module zip instead of downloading it (must hash to the pinned sum)")
	cmd.Flags().BoolVar(&f.check, "check", false, "build nothing: check that each built binary runs and reports the stamped version and the official commit")
	return cmd
}

// checkControlPlane runs each built binary's version command.
func checkControlPlane(cmd *cobra.Command, s Streams, p build.ControlPlanePaths, version, commit string) error {
	for _, c := range build.ControlPlaneCommands {
		bin := p.Binary(c.Name)
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s is not built (make control-plane VERSION=...): %w", c.Name, err)
		}
		if err := build.CheckControlPlaneVersion(cmd.Context(), bin, c.Name, version, commit); err != nil {
			return err
		}
		fmt.Fprintf(s.Out, "ok  %s: %s, commit %s\n", bin, version, commit)
	}
	return nil
}
