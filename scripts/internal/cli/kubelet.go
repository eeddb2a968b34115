package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
)

type kubeletFlags struct {
	buildFlags
	sourceZip string
}

func newKubeletCmd(s Streams, g *globals) *cobra.Command {
	f := &kubeletFlags{}
	cmd := &cobra.Command{
		Use:   "kubelet",
		Short: "Build the kubelet of a pinned release (fetch, restore, patch, compile, checksum)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := buildKubelet(cmd.Context(), s, g, f)
			return err
		},
	}
	f.register(cmd.Flags(), "release to build")
	cmd.Flags().StringVar(&f.sourceZip, "source-zip", "", "use this k8s.io/kubernetes module zip instead of downloading it (must hash to the pinned sum)")
	return cmd
}

// newDockershimCmd builds the kubelet target of a release with a shim
// series: its dockershim is an output of that target, so the kubelet is
// built (or found up to date) with it.
func newDockershimCmd(s Streams, g *globals) *cobra.Command {
	f := &kubeletFlags{}
	cmd := &cobra.Command{
		Use:   "dockershim",
		Short: "Build a release's standalone dockershim (and its kubelet, the same target): 1.23.17's, for kubelets 1.24 and 1.25",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, r, _, err := f.resolve(g)
			if err != nil {
				return err
			}
			if r.Series.Shim == "" {
				var with []string
				for _, o := range m.Releases {
					if o.Series.Shim != "" {
						with = append(with, o.Release)
					}
				}
				return fmt.Errorf("release %s: no dockershim build: make dockershim builds %s only (the releases whose versions.yaml entry names a series.shim)", r.Release, strings.Join(with, ", "))
			}
			_, err = buildKubelet(cmd.Context(), s, g, f)
			return err
		},
	}
	f.register(cmd.Flags(), "release whose dockershim to build")
	cmd.Flags().StringVar(&f.sourceZip, "source-zip", "", "use this k8s.io/kubernetes module zip instead of downloading it (must hash to the pinned sum)")
	return cmd
}

func buildKubelet(ctx context.Context, s Streams, g *globals, f *kubeletFlags) (*build.Result, error) {
	m, r, v, err := f.resolve(g)
	if err != nil {
		return nil, err
	}
	o, err := buildOptions(s, m, r, f.sourceZip)
	if err != nil {
		return nil, err
	}
	o.Variant = v
	return buildTarget(ctx, s, o, build.KubeletTarget(o), r.GitVersion(v), false)
}

// buildOptions is a build of r with its progress on stderr and, when zip
// is set, that module zip instead of a download.
func buildOptions(s Streams, m *matrix.Matrix, r *matrix.Release, zip string) (build.Options, error) {
	if zip != "" {
		var err error
		if zip, err = filepath.Abs(zip); err != nil {
			return build.Options{}, err
		}
	}
	return build.Options{Matrix: m, Release: r, SourceZip: zip, OutputDir: m.OutputDir(), Log: s.Err}, nil
}

// buildTarget builds t and reports it the same way for every target: up
// to date or built (stamped version, time, each stage), each output's sum,
// and whether it matches CHECKSUMS. With list, each output's
// "<sha256>  <CHECKSUMS key>" line goes to stdout.
func buildTarget(ctx context.Context, s Streams, o build.Options, t *build.Target, version string, list bool) (*build.Result, error) {
	start := time.Now()
	res, err := build.Run(ctx, o, t)
	if err != nil {
		return nil, err
	}
	want, err := checksums.Load(filepath.Join(o.Matrix.Root, checksums.FileName))
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(o.Matrix.Root, t.Paths.Bin)
	if res.UpToDate {
		fmt.Fprintf(s.Err, "%s is up to date\n", rel)
	} else {
		fmt.Fprintf(s.Err, "built %s (%s, %s)\n  stages:", rel, version, time.Since(start).Round(100*time.Millisecond))
		for _, st := range res.Stages {
			fmt.Fprintf(s.Err, " %s %s", st.Stage, st.Duration)
		}
		fmt.Fprintln(s.Err)
	}
	for _, out := range t.Outputs {
		key, sum := checksums.KeyOf(o.OutputDir, res.Path(out.Name)), res.SHA256[out.Name]
		fmt.Fprintf(s.Err, "  %s sha256 %s\n", out.Name, sum)
		if list {
			fmt.Fprintf(s.Out, "%s  %s\n", sum, key)
		}
		want.Note(key, sum, s.Err)
	}
	return res, nil
}
