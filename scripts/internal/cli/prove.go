package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/identity/podhash"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/scripts/internal/pipeline/lock"
	"kubelet-toolchain/scripts/internal/pipeline/plan"
	"kubelet-toolchain/scripts/internal/pipeline/smoke"
)

// newProveCmd proves build targets: CI's (--changed: the targets whose
// inputs differ from CHECKSUMS.inputs) or one release's shard (--release:
// every target of it, from scratch). A proved target is built, its sums
// compared with CHECKSUMS and its inputs with the record; a kubelet is
// started (smoke); a release with a kubelet proved gets its lock checked,
// its in-tree tests run and its hashes and UIDs cross-checked with its
// neighbours.
func newProveCmd(s Streams, g *globals) *cobra.Command {
	var changed bool
	var release string
	cmd := &cobra.Command{
		Use:   "prove",
		Short: "Build and check CI's targets (--changed: inputs differ from CHECKSUMS.inputs) or one release's (--release, from scratch): sums, locks, in-tree tests, cross-checks",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if changed == (release != "") {
				return badInput(errors.New("prove: give --changed or --release"))
			}
			m, err := g.loadMatrix()
			if err != nil {
				return err
			}
			var names []string
			if release != "" {
				names = []string{release}
			}
			ts, err := plan.Targets(cmd.Context(), m, names)
			if err != nil {
				return err
			}
			p := &prover{s: s, g: g, m: m, scratch: release != ""}
			return p.run(cmd.Context(), ts)
		},
	}
	cmd.Flags().BoolVar(&changed, "changed", false, "the targets whose inputs differ from CHECKSUMS.inputs (CI)")
	cmd.Flags().StringVar(&release, "release", "", "every target of this release, built from scratch whatever the record says (make test-release)")
	return cmd
}

type prover struct {
	s       Streams
	g       *globals
	m       *matrix.Matrix
	scratch bool // build every target given, from an empty directory
	fails   []string
}

func (p *prover) fail(format string, a ...any) { p.fails = append(p.fails, fmt.Sprintf(format, a...)) }

func (p *prover) run(ctx context.Context, ts []plan.Target) error {
	start := time.Now()
	proved := func(t plan.Target) bool { return p.scratch || t.Changed() }
	n := 0
	for _, t := range ts {
		if proved(t) {
			n++
		}
	}
	fmt.Fprintf(p.s.Out, "==> prove: %d of %d targets to build and check (the list at the end says why each is or is not)\n", n, len(ts))
	kubelets := plan.Releases(ts, func(t plan.Target) bool { return proved(t) && t.Kubelet() })
	locks := plan.Releases(ts, func(t plan.Target) bool {
		return p.scratch || slices.ContainsFunc(t.Differ, func(d string) bool {
			return strings.HasPrefix(d, "lock") || strings.HasPrefix(d, "source")
		})
	})
	for _, name := range locks {
		r, _ := p.m.Lookup(name)
		if err := checkLock(ctx, p.s, lock.Options{Matrix: p.m, Release: r, Log: p.s.Err}); err != nil {
			p.fail("lock %s: %v", r.Lock(), err)
		}
	}
	for _, t := range ts {
		if proved(t) && !p.build(ctx, t) {
			// Its in-tree tests and cross-checks would only build it again.
			kubelets = slices.DeleteFunc(kubelets, func(n string) bool { return n == t.Release.Release })
		}
	}
	for _, name := range kubelets {
		if err := testTree(ctx, p.s, p.g, name, "", ""); err != nil {
			p.fail("%v", err)
		}
	}
	if len(kubelets) > 0 {
		c := &podhash.Crosscheck{Matrix: p.m, Count: 1000, Seed: 1, Log: p.s.Err, Out: p.s.Out, Only: kubelets}
		if err := c.Run(ctx); err != nil {
			p.fail("cross-check of %s: %v", strings.Join(kubelets, ", "), err)
		}
	}
	var built, skipped []string
	for _, t := range ts {
		if proved(t) {
			built = append(built, t.Key)
		} else {
			skipped = append(skipped, t.Key)
		}
	}
	result := "passed"
	if len(p.fails) > 0 {
		result = fmt.Sprintf("FAILED (%d failures)", len(p.fails))
	}
	summary := fmt.Sprintf("%s  built and checked %d targets (%s); did not build %d (inputs unchanged since CHECKSUMS recorded them); locks checked: %s; in-tree tests and cross-checks: %s; %s, %s\n",
		plan.Summary(ts, proved), len(built), orNone(built), len(skipped), orNone(locks), orNone(kubelets), time.Since(start).Round(time.Second), result)
	fmt.Fprint(p.s.Out, "==> prove:\n"+summary)
	if err := os.MkdirAll(filepath.Join(p.m.OutputDir(), "prove"), 0o755); err == nil {
		os.WriteFile(filepath.Join(p.m.OutputDir(), "prove", "summary.txt"), []byte(summary), 0o644)
	}
	if len(p.fails) > 0 {
		return fmt.Errorf("prove: %d failures:\n  %s", len(p.fails), strings.Join(p.fails, "\n  "))
	}
	return nil
}

// build builds one target (from an empty directory in a shard), compares
// every output with CHECKSUMS and the inputs with the record, and starts a
// kubelet. It reports whether the target was built.
func (p *prover) build(ctx context.Context, t plan.Target) bool {
	if p.scratch {
		if err := fsutil.RemoveAll(t.Target.Paths.Dir); err != nil {
			p.fail("%s: removing %s: %v", t.Key, t.Target.Paths.Dir, err)
			return false
		}
	}
	o := t.Options
	o.Log = p.s.Err
	fmt.Fprintf(p.s.Err, "==> prove %s: %s\n", t.Key, t.Why())
	res, err := build.Run(ctx, o, t.Target)
	if err != nil {
		p.fail("%s: %v", t.Key, err)
		return false
	}
	want, err := checksums.Load(filepath.Join(p.m.Root, checksums.FileName))
	if err != nil {
		p.fail("%v", err)
		return false
	}
	bad := unlikeChecksums(want, o.OutputDir, t.Target, res, p.s.Out)
	switch {
	case len(bad) > 0 && t.Changed():
		p.fail("%s: %s differ from CHECKSUMS; its inputs that differ from %s: %s (if on purpose: make update-checksums records both)",
			t.Key, strings.Join(bad, ", "), checksums.InputsFileName, strings.Join(t.Differ, ", "))
	case len(bad) > 0:
		p.fail("%s: %s differ from CHECKSUMS with the inputs it recorded: the build is not reproducible", t.Key, strings.Join(bad, ", "))
	case t.Changed():
		p.fail("%s: its binaries are the ones CHECKSUMS has, but its inputs differ from %s (%s): make update-checksums records them, or every CI builds it again",
			t.Key, checksums.InputsFileName, strings.Join(t.Differ, ", "))
	}
	if !t.Kubelet() {
		return true
	}
	v := matrix.Variant(t.Target.Name)
	rep, err := smoke.Run(ctx, res.Path("kubelet"), t.Release.GitVersion(v), filepath.Join(p.m.Root, "scripts", "node", "shadow-sysctls.sh"), time.Minute)
	if err != nil {
		p.fail("%s: smoke test: %v", t.Key, err)
		return true
	}
	fmt.Fprintf(p.s.Out, "ok  %s: version %s, cAdvisor started, dialled its runtime endpoint\n", t.Key, rep.Version)
	return true
}

func orNone(s []string) string {
	if len(s) == 0 || len(s) == 1 && s[0] == "" {
		return "none"
	}
	return strings.Join(s, ", ")
}

// unlikeChecksums lists t's outputs whose sums differ from CHECKSUMS
// (want), each with both sums, and writes an ok line for the others.
func unlikeChecksums(want checksums.File, outputDir string, t *build.Target, res *build.Result, ok io.Writer) []string {
	var bad []string
	for _, out := range t.Outputs {
		key, sum := checksums.KeyOf(outputDir, res.Path(out.Name)), res.SHA256[out.Name]
		if want[key] != sum {
			bad = append(bad, fmt.Sprintf("%s (CHECKSUMS %s, built %s)", key, orNone([]string{want[key]}), sum))
		} else {
			fmt.Fprintf(ok, "ok  %s  %s\n", sum, key)
		}
	}
	return bad
}
