package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/cluster/nodes"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/scripts/internal/pipeline/plan"
)

// The e2e's specs carry a label per build target they run: kubelet:<release>
// (either variant) and control-plane:<release>; the seeds' own specs, which
// CI always runs, carry seed. e2e/run.sh asks e2e-filter which specs a run
// takes and e2e-targets to build what they need.
const (
	labelKubelet      = "kubelet"
	labelControlPlane = "control-plane"
)

func newE2ETargetsCmd(s Streams, g *globals) *cobra.Command {
	var report, specs string
	var also, suites []string
	cmd := &cobra.Command{
		Use:   "e2e-targets",
		Short: "With --filter: print the e2e's Ginkgo label filter for E2E_SPECS (ci: the seeds' specs and those of the targets whose inputs changed; release:X; extended; all). With --report: build the kubelets and control planes a Ginkgo dry run's specs are labelled with, check them against CHECKSUMS, and print them",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := g.loadMatrix()
			if err != nil {
				return err
			}
			if (specs == "") == (report == "" && len(also) == 0) {
				return badInput(errors.New("e2e-targets: give --filter, or --report and/or --also"))
			}
			if specs != "" {
				f, err := labelFilter(cmd, m, specs)
				if err != nil {
					return err
				}
				fmt.Fprintln(s.Out, f)
				return nil
			}
			if len(suites) > 0 {
				labels, err := reportLabels(report)
				if err != nil {
					return err
				}
				for _, suite := range suites {
					if slices.Contains(labels, suite) {
						fmt.Fprintln(s.Out, suite)
					}
				}
				return nil
			}
			var kubelets, cps []string
			if report != "" {
				if kubelets, cps, err = reportTargets(report); err != nil {
					return err
				}
			}
			kubelets, cps = addLabels(kubelets, cps, also)
			want, err := checksums.Load(filepath.Join(m.Root, checksums.FileName))
			if err != nil {
				return err
			}
			var bad []string
			check := func(o build.Options, t *build.Target) error {
				res, err := build.Run(cmd.Context(), o, t)
				if err != nil {
					return err
				}
				bad = append(bad, unlikeChecksums(want, o.OutputDir, t, res, s.Err)...)
				fmt.Fprintln(s.Out, build.TargetKey(o.Release, t))
				return nil
			}
			for _, name := range kubelets {
				r, err := m.Lookup(name)
				if err != nil {
					return fmt.Errorf("a spec's label %s:%s: %w", labelKubelet, name, err)
				}
				for _, v := range []matrix.Variant{matrix.Vanilla, matrix.Patched} {
					o := build.Options{Matrix: m, Release: r, Variant: v, OutputDir: m.OutputDir(), Log: s.Err}
					if err := check(o, build.KubeletTarget(o)); err != nil {
						return err
					}
				}
			}
			for _, name := range cps {
				r, err := m.Lookup(name)
				if err != nil {
					return fmt.Errorf("a spec's label %s:%s: %w", labelControlPlane, name, err)
				}
				if err := build.ControlPlaneSupported(m, r); err != nil {
					return fmt.Errorf("a spec's label %s:%s: %w", labelControlPlane, name, err)
				}
				o := build.Options{Matrix: m, Release: r, OutputDir: m.OutputDir(), Log: s.Err}
				if err := check(o, build.ControlPlaneTarget(cmd.Context(), o)); err != nil {
					return err
				}
			}
			if len(bad) > 0 {
				return fmt.Errorf("the e2e's targets differ from CHECKSUMS: %s", strings.Join(bad, "; "))
			}
			// A control plane means a rehearsal's nodes (or the nodes
			// suite's): their image's root filesystem is built here too,
			// so its minutes on a fresh machine are not a spec's.
			if len(cps) > 0 {
				start := time.Now()
				tar, err := nodes.PrepareImage(cmd.Context(), nodes.ImageOptions{Dir: nodes.ImageCacheDir()})
				if err != nil {
					return err
				}
				fmt.Fprintf(s.Err, "node image root filesystem %s ready in %s\n", filepath.Base(tar), time.Since(start).Round(100*time.Millisecond))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&specs, "filter", "", "E2E_SPECS: ci, extended, all or release:<release>[,<release>...]")
	cmd.Flags().StringVar(&report, "report", "", "a Ginkgo --dry-run --json-report of the specs to run")
	cmd.Flags().StringSliceVar(&suites, "suites", nil, "with --report: print those of these suites (labels) that some of the dry run's specs carry, and build nothing")
	cmd.Flags().StringSliceVar(&also, "also", nil, "labels of targets to build besides the specs' (kubelet:<release>, control-plane:<release>): the nodes suite's")
	return cmd
}

// labelFilter is E2E_SPECS as a Ginkgo label filter. ci: the seeds' specs
// and the (not extended) specs of every kubelet and control plane whose
// inputs differ from CHECKSUMS.inputs; release:X every spec naming X,
// release:X,Y every spec naming either (several shards as one run).
func labelFilter(cmd *cobra.Command, m *matrix.Matrix, specs string) (string, error) {
	anyOf := func(kubelets, cps []string) string {
		var or []string
		if len(kubelets) > 0 {
			or = append(or, fmt.Sprintf("%s: containsAny {%s}", labelKubelet, strings.Join(kubelets, ", ")))
		}
		if len(cps) > 0 {
			or = append(or, fmt.Sprintf("%s: containsAny {%s}", labelControlPlane, strings.Join(cps, ", ")))
		}
		return strings.Join(or, " || ")
	}
	switch {
	case specs == "ci":
		ts, err := plan.Targets(cmd.Context(), m, nil)
		if err != nil {
			return "", err
		}
		changed := func(kind func(plan.Target) bool) []string {
			return plan.Releases(ts, func(t plan.Target) bool { return t.Changed() && kind(t) })
		}
		kubelets := changed(plan.Target.Kubelet)
		cps := changed(func(t plan.Target) bool { return t.Target.Name == build.ControlPlaneTargetName })
		if or := anyOf(kubelets, cps); or != "" {
			return "(seed || " + or + ") && !extended", nil
		}
		return "seed && !extended", nil
	case specs == "extended":
		return "extended", nil
	case specs == "all":
		return "", nil
	case strings.HasPrefix(specs, "release:"):
		names := strings.Split(strings.TrimPrefix(specs, "release:"), ",")
		for _, name := range names {
			if _, err := m.Lookup(name); err != nil {
				return "", badInput(fmt.Errorf("E2E_SPECS=%s: %w", specs, err))
			}
		}
		return anyOf(names, names), nil
	}
	return "", badInput(fmt.Errorf("E2E_SPECS=%s: want ci, extended, all or release:<release>[,<release>...]", specs))
}

// reportTargets reads the kubelet and control plane labels of the specs a
// Ginkgo dry run would run, each release once, in the order first seen.
func reportTargets(path string) (kubelets, cps []string, err error) {
	labels, err := reportLabels(path)
	if err != nil {
		return nil, nil, err
	}
	kubelets, cps = addLabels(nil, nil, labels)
	return kubelets, cps, nil
}

// reportLabels lists the labels of the specs a Ginkgo dry run would run,
// each once, in the order first seen.
func reportLabels(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var reports []struct {
		SpecReports []struct {
			LeafNodeType             string
			State                    string
			LeafNodeLabels           []string
			ContainerHierarchyLabels [][]string
		}
	}
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, r := range reports {
		for _, sp := range r.SpecReports {
			if sp.LeafNodeType != "It" || sp.State != "passed" { // a dry run passes the specs it would run
				continue
			}
			for _, l := range slices.Concat(append(sp.ContainerHierarchyLabels, sp.LeafNodeLabels)...) {
				if !slices.Contains(out, l) {
					out = append(out, l)
				}
			}
		}
	}
	return out, nil
}

// addLabels adds the releases of the kubelet and control-plane labels
// among labels, each once.
func addLabels(kubelets, cps, labels []string) ([]string, []string) {
	for _, l := range labels {
		key, value, ok := strings.Cut(l, ":")
		value = strings.TrimSpace(value)
		switch {
		case !ok:
		case key == labelKubelet && !slices.Contains(kubelets, value):
			kubelets = append(kubelets, value)
		case key == labelControlPlane && !slices.Contains(cps, value):
			cps = append(cps, value)
		}
	}
	return kubelets, cps
}
