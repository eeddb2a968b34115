package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/build"
	"kubelet-toolchain/scripts/internal/checksums"
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

func buildKubelet(ctx context.Context, s Streams, g *globals, f *kubeletFlags) (*build.Result, error) {
	m, r, v, err := f.resolve(g)
	if err != nil {
		return nil, err
	}
	zip := f.sourceZip
	if zip != "" {
		if zip, err = filepath.Abs(zip); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	res, err := build.Run(ctx, build.Options{Matrix: m, Release: r, Variant: v, SourceZip: zip, Log: s.Err})
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(m.Root, res.Binary)
	if res.UpToDate {
		fmt.Fprintf(s.Err, "%s is up to date (sha256 %s)\n", rel, res.SHA256)
	} else {
		printBuilt(s.Err, rel, r.GitVersion(v), start, "  sha256 "+res.SHA256+"\n", res.Stages)
	}
	want, err := checksums.Load(filepath.Join(m.Root, checksums.FileName))
	if err != nil {
		return nil, err
	}
	want.Note(checksums.Key(r.Release, string(v)), res.SHA256, s.Err)
	return res, nil
}

// printBuilt reports a finished build: what, its stamped version, how long,
// extra lines, and each stage's time.
func printBuilt(w io.Writer, rel, version string, start time.Time, extra string, stages []build.Timing) {
	fmt.Fprintf(w, "built %s (%s, %s)\n%s  stages:", rel, version, time.Since(start).Round(100*time.Millisecond), extra)
	for _, t := range stages {
		fmt.Fprintf(w, " %s %s", t.Stage, t.Duration)
	}
	fmt.Fprintln(w)
}
