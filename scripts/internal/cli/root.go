// Package cli is the toolchain's command line: one file per command, each
// a flags struct and a short RunE that turns flags into options for the
// library packages. Only main exits.
//
// One rule for output: progress and diagnostics go to stderr, results
// (what a script would read) to stdout. The -v levels are documented in
// package execx, the one place that logs through the logger.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2/textlogger"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
)

// Streams are the command's standard streams.
type Streams struct {
	Out, Err io.Writer
}

// globals are flags every command shares.
type globals struct {
	root     string
	versions string
}

// Run executes the command line args and returns the error to report.
// SIGINT and SIGTERM cancel the context every command runs with: external
// commands are stopped and temporary trees removed on the way out.
func Run(streams Streams, args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logs := textlogger.NewConfig(textlogger.Output(streams.Err))
	cmd := newRoot(streams, logs)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(logr.NewContext(ctx, textlogger.NewLogger(logs)))
}

func newRoot(s Streams, logs *textlogger.Config) *cobra.Command {
	g := &globals{}
	cmd := &cobra.Command{
		Use:           "toolchain",
		Short:         "Build patched kubelets from pinned upstream Kubernetes releases",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(s.Out)
	cmd.SetErr(s.Err)
	cmd.PersistentFlags().StringVar(&g.root, "root", ".", "repository root (holds versions.yaml, patches/, overlay/, locks/)")
	cmd.PersistentFlags().StringVar(&g.versions, "versions", "", "release matrix file (default <root>/versions.yaml)")
	fs := flag.NewFlagSet("log", flag.ContinueOnError)
	logs.AddFlags(fs)
	v := fs.Lookup("v")
	v.Usage = "log verbosity: 2 every command run, 4 also its output (levels: package execx)"
	cmd.PersistentFlags().AddGoFlag(v)
	cmd.AddCommand(
		newKubeletCmd(s, g),
		newDockershimCmd(s, g),
		newSwitchNodeCmd(s),
		newControlPlaneCmd(s, g),
		newConformanceSuiteCmd(s, g),
		newLockCmd(s, g),
		newChecksumsCmd(s, g, false),
		newChecksumsCmd(s, g, true),
		newReleasesCmd(s, g),
		newBenchBuildCmd(s, g),
		newSmokeCmd(s, g),
		newGenSchemaCmd(s, g),
		newGenUIDGoldensCmd(s, g),
		newTestTreeCmd(s, g),
		newHashCmd(s, g),
		newPreflightCmd(s, g),
		newCrosscheckCmd(s, g),
		newProveCmd(s, g),
		newE2ETargetsCmd(s, g),
		newManifestCorpusCmd(s, g),
		newBenchHashCmd(s, g),
		newVerifyCmd(s, g),
		newPackageCmd(s, g),
		newCheckPackageCmd(s, g),
		newExportPatchesCmd(s, g),
		newRepoCmd(s, g),
		newCheckRepoCmd(s, g),
		newRehearsalCmd(s, g),
		newMachineCmd(s, g),
		newCleanCmd(s, g),
	)
	return cmd
}

// loadMatrix reads versions.yaml from the repository root.
func (g *globals) loadMatrix() (*matrix.Matrix, error) {
	root, err := filepath.Abs(g.root)
	if err != nil {
		return nil, err
	}
	path := g.versions
	if path == "" {
		path = filepath.Join(root, "versions.yaml")
	}
	return matrix.Load(path, root)
}

// release looks up the --release flag's value, listing the supported ones
// when it is unknown.
func (g *globals) release(name string) (*matrix.Matrix, *matrix.Release, error) {
	m, err := g.loadMatrix()
	if err != nil {
		return nil, nil, err
	}
	if name == "" {
		return nil, nil, fmt.Errorf("no release given (VERSION=...); supported: %v", m.Names())
	}
	r, err := m.Lookup(name)
	return m, r, err
}

// buildFlags are --release and --variant: the build a command acts on.
type buildFlags struct {
	release, variant string
}

// register adds --release (described as what) and --variant to fs.
func (f *buildFlags) register(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.release, "release", "", what+", e.g. 1.9.11")
	fs.StringVar(&f.variant, "variant", string(matrix.Patched), "patched or vanilla")
}

// resolve looks the release and variant up in the matrix.
func (f *buildFlags) resolve(g *globals) (*matrix.Matrix, *matrix.Release, matrix.Variant, error) {
	m, r, err := g.release(f.release)
	if err != nil {
		return nil, nil, "", err
	}
	v, err := parseVariant(f.variant)
	return m, r, v, err
}

func parseVariant(s string) (matrix.Variant, error) {
	for _, v := range matrix.Variants {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown variant %q: use %s or %s", s, matrix.Patched, matrix.Vanilla)
}

func newReleasesCmd(s Streams, g *globals) *cobra.Command {
	var names, controlPlanes, conformance bool
	cmd := &cobra.Command{
		Use:   "releases",
		Short: "List the pinned releases",
		RunE: func(*cobra.Command, []string) error {
			m, err := g.loadMatrix()
			if err != nil {
				return err
			}
			for i := range m.Releases {
				r := &m.Releases[i]
				switch {
				case conformance:
					if build.ConformanceSupported(m, r) == nil {
						fmt.Fprintln(s.Out, r.Release)
					}
				case controlPlanes:
					if r.Series.ControlPlane != "" && r.StandIn == "" {
						fmt.Fprintln(s.Out, r.Release)
					}
				case !names:
					fmt.Fprintf(s.Out, "%-8s %-7s cgo=%-5v %s  %s\n", r.Release, r.Era, r.CGO, r.Series.For(matrix.Patched), r.Note)
				case r.StandIn == "":
					fmt.Fprintln(s.Out, r.Release)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&names, "names", false, "only the names of the releases built here (not those with a standIn), one per line, for the Makefile's loops")
	cmd.Flags().BoolVar(&controlPlanes, "control-planes", false, "only the names of the releases with a control plane (make control-plane), one per line")
	cmd.Flags().BoolVar(&conformance, "conformance", false, "only the names of the releases with upstream's node conformance suite (make conformance-suite), one per line")
	return cmd
}
