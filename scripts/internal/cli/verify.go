package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/identity/podhash"
	"kubelet-toolchain/scripts/internal/identity/schemagen"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/patch"
	"kubelet-toolchain/scripts/internal/pipeline/source"
)

func newVerifyCmd(s Streams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Apply every series to every release mapped to it and compile; check generated files and locks; report every failure",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			m, err := g.loadMatrix()
			if err != nil {
				return err
			}
			var failures []string
			fail := func(what string, err error) {
				failures = append(failures, fmt.Sprintf("%s: %v", what, err))
				fmt.Fprintf(s.Err, "FAIL %s\n", what)
			}
			for _, r := range m.Releases {
				for _, v := range matrix.Variants {
					what := fmt.Sprintf("release %s %s (series %v)", r.Release, v, r.Series.For(v))
					// A stand-in's release is locked only by whoever has
					// its zip (make lock KUBE_SOURCE_ZIP=...).
					if _, err := os.Stat(filepath.Join(m.Root, r.Lock())); r.StandIn != "" && errors.Is(err, fs.ErrNotExist) {
						fmt.Fprintf(s.Out, "skip %s: no lock, not served here (stand-in %s is verified instead)\n", what, r.StandIn)
						continue
					}
					_, err := buildKubelet(ctx, s, g, &kubeletFlags{buildFlags: buildFlags{r.Release, string(v)}})
					switch {
					case errors.Is(err, source.ErrRefused) && r.StandIn != "":
						fmt.Fprintf(s.Out, "skip %s: not served here (stand-in %s is verified instead)\n", what, r.StandIn)
					case err != nil:
						fail(what, err)
					default:
						fmt.Fprintf(s.Out, "ok   %s\n", what)
					}
				}
			}
			for _, r := range m.Releases {
				if r.Series.ControlPlane == "" {
					continue
				}
				what := fmt.Sprintf("release %s control plane (series %v)", r.Release, r.Series.ForControlPlane())
				if _, err := build.ControlPlane(ctx, build.Options{Matrix: m, Release: &r, Log: s.Err}); err != nil {
					fail(what, err)
				} else {
					fmt.Fprintf(s.Out, "ok   %s\n", what)
				}
			}
			for _, name := range m.SeriesNames() {
				sr, err := patch.Load(m.Root, name)
				if err == nil {
					err = sr.CheckHeaders()
				}
				if err != nil {
					fail("series "+name, err)
				}
			}
			for _, f := range schemagen.Find(m.Root) {
				n, err := f.Schema.Check(ctx, f.ModuleVersion, f.Path)
				if err != nil {
					fail("generated "+f.Path, err)
					continue
				}
				fmt.Fprintf(s.Out, "%s: up to date (%d types)\n", f.Path, n)
			}
			if err := checkUIDGoldens(ctx, s, m); err != nil {
				fail("generated "+podhash.GoldensDir, err)
			}
			checkLocks(ctx, s, m, fail)
			if len(failures) > 0 {
				return fmt.Errorf("verify found %d failures:\n%s", len(failures), strings.Join(failures, "\n"))
			}
			return nil
		},
	}
}

// checkUIDGoldens regenerates the official-derivation goldens and compares.
func checkUIDGoldens(ctx context.Context, s Streams, m *matrix.Matrix) error {
	dir := filepath.Join(m.Root, podhash.GoldensDir)
	for _, version := range podhash.GoldensReleases {
		r, err := m.Lookup(version)
		if err != nil {
			return err
		}
		files, err := podhash.GenGoldens(ctx, m, r, dir, s.Err)
		if err != nil {
			return err
		}
		out := podhash.GoldensOut(dir, r)
		if err := podhash.WriteGoldens(out, files, true); err != nil {
			return err
		}
		fmt.Fprintf(s.Out, "%s: up to date (%d files)\n", out, len(files))
	}
	return nil
}
