package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/identity/podhash"
)

func newCrosscheckCmd(s Streams, g *globals) *cobra.Command {
	c := &podhash.Crosscheck{Log: s.Err, Out: s.Out}
	cmd := &cobra.Command{
		Use:   "hash-crosscheck",
		Short: "Property test across releases: hash(baseline vanilla) == hash(patched) != hash(vanilla) for every release with a hashBaseline, on a generated corpus and the release's own manifests (API pods)",
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if c.Matrix, err = g.loadMatrix(); err != nil {
				return err
			}
			return c.Run(cmd.Context())
		},
	}
	cmd.Flags().IntVar(&c.Count, "count", 1000, "containers in the generated corpus")
	cmd.Flags().Int64Var(&c.Seed, "seed", 1, "corpus seed")
	cmd.Flags().StringSliceVar(&c.Only, "releases", nil, "only these releases, checked against their neighbours (default: every release)")
	return cmd
}

func newManifestCorpusCmd(s Streams, g *globals) *cobra.Command {
	var release, out string
	cmd := &cobra.Command{
		Use:   "manifest-corpus",
		Short: "Write every workload manifest of a release's own tree (add-ons, examples, e2e manifests) as a List of Pods, as kubectl shows them",
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, r, err := g.release(release)
			if err != nil {
				return err
			}
			n, skipped, err := podhash.ReleaseManifests(cmd.Context(), r, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "%s: %d pods from %s's manifests (%d files skipped: not YAML or JSON)\n", out, n, release, len(skipped))
			return nil
		},
	}
	cmd.Flags().StringVar(&release, "release", "1.9.11", "release whose tree to read")
	cmd.Flags().StringVar(&out, "out", "", "file to write")
	return cmd
}

func newBenchHashCmd(s Streams, g *globals) *cobra.Command {
	f := &buildFlags{}
	var count int
	cmd := &cobra.Command{
		Use:   "bench-hash",
		Short: "Benchmark: hash a generated corpus of containers with a release's helper (built first, not timed)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := parseVariant(f.variant)
			if err != nil {
				return err
			}
			h, err := helper(cmd.Context(), s, g, f.release, v)
			if err != nil {
				return err
			}
			m, _ := g.loadMatrix()
			pods := filepath.Join(m.OutputDir(), "crosscheck", fmt.Sprintf("bench-%d.json", count))
			best, n, err := podhash.Bench(cmd.Context(), h, pods, count)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "bench-hash %s %s: %d containers in %s (best of 3; %.1f us/container; target < 2s)\n",
				f.release, v, n, best.Round(time.Millisecond), float64(best.Microseconds())/float64(n))
			return nil
		},
	}
	f.register(cmd.Flags(), "release")
	cmd.Flags().IntVar(&count, "count", 10000, "containers")
	return cmd
}
