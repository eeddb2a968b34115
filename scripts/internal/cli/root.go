// Package cli is the toolchain's command line: one file per command, each
// turning flags into options for the library packages. Only main exits.
package cli

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"kubelet-toolchain/scripts/internal/matrix"
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
func Run(streams Streams, args []string) error {
	cmd := newRoot(streams)
	cmd.SetArgs(args)
	return cmd.Execute()
}

func newRoot(s Streams) *cobra.Command {
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
	// klog's -v: 0 progress, 2 commands run, 4 everything.
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	cmd.PersistentFlags().AddGoFlag(fs.Lookup("v"))
	cmd.AddCommand(
		newKubeletCmd(s, g),
		newLockCmd(s, g),
		newChecksumsCmd(s, g, false),
		newChecksumsCmd(s, g, true),
		newReleasesCmd(s, g),
		newBenchBuildCmd(s, g),
		newSmokeCmd(s, g),
		newGenSchemaCmd(s, g),
		newTestTreeCmd(s, g),
		newHashCmd(s, g),
		newPreflightCmd(s, g),
		newCrosscheckCmd(s, g),
		newManifestCorpusCmd(s, g),
		newBenchHashCmd(s, g),
		newVerifyCmd(s, g),
		newPackageCmd(s, g),
		newCheckPackageCmd(s, g),
		newExportPatchesCmd(s, g),
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

// build looks up a release and a variant given as flags.
func (g *globals) build(release, variant string) (*matrix.Matrix, *matrix.Release, matrix.Variant, error) {
	m, r, err := g.release(release)
	if err != nil {
		return nil, nil, "", err
	}
	v, err := parseVariant(variant)
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
	return &cobra.Command{
		Use:   "releases",
		Short: "List the pinned releases",
		RunE: func(*cobra.Command, []string) error {
			m, err := g.loadMatrix()
			if err != nil {
				return err
			}
			for _, r := range m.Releases {
				fmt.Fprintf(s.Out, "%-8s %-7s cgo=%-5v %s  %s\n", r.Release, r.Era, r.CGO, r.Series.For(matrix.Patched), r.Note)
			}
			return nil
		},
	}
}
