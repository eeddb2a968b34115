package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/matrix"
	"kubelet-toolchain/scripts/internal/podhash"
	"kubelet-toolchain/scripts/internal/source"
)

func newCrosscheckCmd(s Streams, g *globals) *cobra.Command {
	var count int
	var seed int64
	cmd := &cobra.Command{
		Use:   "hash-crosscheck",
		Short: "Property test across releases: hash(1.7.5 vanilla) == hash(1.9.11 patched) != hash(1.9.11 vanilla) for a generated corpus and the release's own manifests (API pods)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			m, err := g.loadMatrix()
			if err != nil {
				return err
			}
			dir := filepath.Join(m.OutputDir(), "crosscheck")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			a, b := filepath.Join(dir, "corpus.json"), filepath.Join(dir, "corpus-new-images.json")
			n, err := podhash.Corpus(a, count, seed, "", true)
			if err != nil {
				return err
			}
			if _, err := podhash.Corpus(b, count, seed, "-new", true); err != nil {
				return err
			}
			count = n
			// API pods: privileged and feature-gated containers are hashed as a
			// 1.9 API server with those gates stores them.
			run := func(release string, v matrix.Variant, pods string) ([]podhash.Result, error) {
				h, err := helper(ctx, s, g, release, v)
				if err != nil {
					return nil, err
				}
				return h.Hash(ctx, pods, nil)
			}
			var res [5][]podhash.Result
			for i, step := range []struct {
				release string
				v       matrix.Variant
				pods    string
			}{{"1.7.5", matrix.Vanilla, a}, {"1.9.11", matrix.Patched, a}, {"1.9.11", matrix.Vanilla, a},
				{"1.7.5", matrix.Vanilla, b}, {"1.9.11", matrix.Patched, b}} {
				if res[i], err = run(step.release, step.v, step.pods); err != nil {
					return err
				}
			}
			old, patched, vanilla, oldNew, patchedNew := res[0], res[1], res[2], res[3], res[4]
			for _, r := range res {
				if len(r) != count {
					return fmt.Errorf("a helper reported %d containers, the corpus has %d", len(r), count)
				}
			}
			var bad []string
			report := func(format string, args ...any) {
				if len(bad) < 10 {
					bad = append(bad, fmt.Sprintf(format, args...))
				}
			}
			mismatches := 0
			for i := range old {
				k := old[i].Key()
				switch {
				case old[i].Hash != patched[i].Hash:
					report("%s: 1.7.5 %d, patched 1.9.11 %d", k, old[i].Hash, patched[i].Hash)
				case vanilla[i].Hash == old[i].Hash:
					report("%s: vanilla 1.9.11 agrees with 1.7.5 (%d): the corpus no longer shows the bug", k, old[i].Hash)
				case oldNew[i].Hash == old[i].Hash || patchedNew[i].Hash == patched[i].Hash:
					report("%s: a new image leaves the hash unchanged", k)
				default:
					continue
				}
				mismatches++
			}
			data, _ := os.ReadFile(a)
			newer := strings.Count(string(data), "allowPrivilegeEscalation") + strings.Count(string(data), "mountPropagation") + strings.Count(string(data), "volumeDevices")
			if mismatches > 0 {
				return fmt.Errorf("%d of %d containers break the property (first ones):\n  %s", mismatches, count, strings.Join(bad, "\n  "))
			}
			fmt.Fprintf(s.Out, "ok  %d containers (%d settings of 1.8/1.9-only fields, %d privileged): 1.7.5 vanilla == 1.9.11 patched for all, 1.9.11 vanilla differs for all, a new image changes both\n",
				count, newer, strings.Count(string(data), `"privileged"`))
			return crosscheckManifests(ctx, s, g, filepath.Join(dir, "manifests.json"))
		},
	}
	cmd.Flags().IntVar(&count, "count", 1000, "containers in the generated corpus")
	cmd.Flags().Int64Var(&seed, "seed", 1, "corpus seed")
	return cmd
}

// crosscheckManifests runs the same property over the pods of 1.9.11's own
// manifests (add-ons, examples, e2e manifests), as API pods: every build of
// every release must accept every one of them.
func crosscheckManifests(ctx context.Context, s Streams, g *globals, path string) error {
	pods, _, err := manifestCorpus(ctx, g, "1.9.11", path)
	if err != nil {
		return err
	}
	m, err := g.loadMatrix()
	if err != nil {
		return err
	}
	results := map[string][]podhash.Result{}
	for _, r := range m.Releases {
		if r.StandIn != "" {
			continue
		}
		for _, v := range matrix.Variants {
			h, err := helper(ctx, s, g, r.Release, v)
			if err != nil {
				return err
			}
			res, err := h.Hash(ctx, path, nil)
			if err != nil {
				return fmt.Errorf("%s %s refused a pod of the manifest corpus: %w", r.Release, v, err)
			}
			results[r.Release+"/"+string(v)] = res
		}
	}
	old, patched, vanilla := results["1.7.5/vanilla"], results["1.9.11/patched"], results["1.9.11/vanilla"]
	var bad []string
	for i := range old {
		if old[i].Hash != patched[i].Hash || old[i].Hash == vanilla[i].Hash {
			bad = append(bad, fmt.Sprintf("%s: 1.7.5 %d, patched 1.9.11 %d, vanilla 1.9.11 %d", old[i].Key(), old[i].Hash, patched[i].Hash, vanilla[i].Hash))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d of %d manifest containers break the property:\n  %s", len(bad), len(old), strings.Join(bad[:min(len(bad), 10)], "\n  "))
	}
	fmt.Fprintf(s.Out, "ok  %d pods, %d containers of 1.9.11's own manifests: accepted as API pods by all %d builds; 1.7.5 vanilla == 1.9.11 patched, 1.9.11 vanilla differs, for every container\n",
		pods, len(old), len(results))
	return nil
}

func newManifestCorpusCmd(s Streams, g *globals) *cobra.Command {
	var release, out string
	cmd := &cobra.Command{
		Use:   "manifest-corpus",
		Short: "Write every workload manifest of a release's own tree (add-ons, examples, e2e manifests) as a List of Pods, as kubectl shows them",
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, skipped, err := manifestCorpus(cmd.Context(), g, release, out)
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

// manifestCorpus writes the release's own manifests as pods.
func manifestCorpus(ctx context.Context, g *globals, release, out string) (int, []string, error) {
	_, r, err := g.release(release)
	if err != nil {
		return 0, nil, err
	}
	if out == "" {
		return 0, nil, fmt.Errorf("no output file given (--out)")
	}
	zip, err := source.Zip(ctx, r, "")
	if err != nil {
		return 0, nil, err
	}
	return podhash.ManifestCorpus(zip, source.ModulePath+"@"+r.ModuleVersion+"/", out)
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
			os.MkdirAll(filepath.Dir(pods), 0o755)
			count, err = podhash.Corpus(pods, count, 7, "", false)
			if err != nil {
				return err
			}
			best := time.Duration(1<<63 - 1)
			for i := 0; i < 3; i++ {
				start := time.Now()
				res, err := h.Hash(cmd.Context(), pods, nil)
				if err != nil {
					return err
				}
				if len(res) != count {
					return fmt.Errorf("hashed %d of %d containers", len(res), count)
				}
				best = min(best, time.Since(start))
			}
			fmt.Fprintf(s.Out, "bench-hash %s %s: %d containers in %s (best of 3; %.1f us/container; target < 2s)\n",
				f.release, v, count, best.Round(time.Millisecond), float64(best.Microseconds())/float64(count))
			return nil
		},
	}
	f.register(cmd.Flags(), "release")
	cmd.Flags().IntVar(&count, "count", 10000, "containers")
	return cmd
}
