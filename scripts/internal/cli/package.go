package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/packaging/dist"
)

func newPackageCmd(s Streams, g *globals) *cobra.Command {
	f := &kubeletFlags{}
	cmd := &cobra.Command{
		Use:   "package",
		Short: "Build (or reuse) the kubelet and write its release artifacts to _output/<release>/dist/",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPackage(cmd.Context(), s, g, f)
		},
	}
	f.register(cmd.Flags(), "release to package")
	return cmd
}

// runPackage builds (or reuses) the kubelet and writes its release
// artifacts.
func runPackage(ctx context.Context, s Streams, g *globals, f *kubeletFlags) error {
	built, err := buildKubelet(ctx, s, g, f)
	if err != nil {
		return err
	}
	m, r, v, err := f.resolve(g)
	if err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintf(s.Err, "==> package: %s %s\n", r.Release, v)
	res, err := dist.Package(ctx, dist.Options{Matrix: m, Release: r, Variant: v, SHA256: built.SHA256["kubelet"], Log: s.Err})
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(m.Root, res.Dir)
	fmt.Fprintf(s.Out, "%s: kubelet %s (%d dependency modules, %d patches) in %s\n", rel, res.Version, res.Modules, res.Patches, time.Since(start).Round(100*time.Millisecond))
	for _, a := range res.Artifacts {
		fmt.Fprintf(s.Out, "  %s  %8.1f MiB  %s\n", a.SHA256, float64(a.Size)/(1<<20), a.Name)
	}
	fmt.Fprintf(s.Out, "  (sums in %s/%s)\n", rel, dist.SumsFile)
	return nil
}

type checkPackageFlags struct {
	buildFlags
	cold, keep bool
}

func newCheckPackageCmd(s Streams, g *globals) *cobra.Command {
	f := &checkPackageFlags{}
	cmd := &cobra.Command{
		Use:   "check-package",
		Short: "Check a release's artifacts: sums, a rebuild from the source tarball with the same sha256, the SBOM, the .deb installed into a throwaway root, the SRPM rebuilt and its RPM installed, the Debian source unpacked to the built tree",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, r, v, err := f.resolve(g)
			if err != nil {
				return err
			}
			start := time.Now()
			res, err := dist.Check(cmd.Context(), dist.CheckOptions{Options: dist.Options{Matrix: m, Release: r, Variant: v, Log: s.Err}, ColdCache: f.cold, Keep: f.keep})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "package %s of %s %s checked in %s (rebuild %s, SRPM rebuild %s)\n", r.PackageVersion(v), r.Release, v, time.Since(start).Round(100*time.Millisecond),
				res.RebuildTook.Round(100*time.Millisecond), res.Distro.RPM.RebuildTook.Round(100*time.Millisecond))
			return nil
		},
	}
	f.register(cmd.Flags(), "release whose artifacts to check")
	cmd.Flags().BoolVar(&f.cold, "cold-cache", false, "rebuild (from the source tarball and the SRPM) with an empty GOCACHE, as a packager's first build (slower)")
	cmd.Flags().BoolVar(&f.keep, "keep", false, "keep the extracted tree the rebuild ran in")
	return cmd
}
