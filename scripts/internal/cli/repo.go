package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/repo"
)

type repoFlags struct {
	releases, key, url string
}

// packages resolves --releases ("" is every release built here, as
// `releases --names` lists them) to both variants' packages each.
func (f *repoFlags) packages(g *globals) (*matrix.Matrix, []repo.Package, error) {
	m, err := g.loadMatrix()
	if err != nil {
		return nil, nil, err
	}
	var rs []*matrix.Release
	names := strings.Fields(f.releases)
	if len(names) == 0 {
		for i := range m.Releases {
			if m.Releases[i].StandIn == "" {
				rs = append(rs, &m.Releases[i])
			}
		}
	}
	for _, n := range names {
		r, err := m.Lookup(n)
		if err != nil {
			return nil, nil, fmt.Errorf("VERSIONS: %w", err)
		}
		if r.StandIn != "" {
			return nil, nil, fmt.Errorf("VERSIONS: release %s is not built here (its stand-in %s is): it has no packages", n, r.StandIn)
		}
		rs = append(rs, r)
	}
	return m, repo.Packages(m, rs), nil
}

func newRepoCmd(s Streams, g *globals) *cobra.Command {
	f := &repoFlags{}
	cmd := &cobra.Command{
		Use:   "repo",
		Short: "Publish releases' packages (both variants) as signed yum and apt repositories, one per minor in _output/repo/v<minor>/, packaging the releases not packaged yet",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, pkgs, err := f.packages(g)
			if err != nil {
				return err
			}
			start := time.Now()
			for _, p := range pkgs {
				if p.ShimMissing() && p.Shim.Release != p.Release {
					kf := &kubeletFlags{buildFlags: buildFlags{release: p.Shim.Release.Release, variant: string(p.Variant)}}
					if err := runPackage(cmd.Context(), s, g, kf); err != nil {
						return fmt.Errorf("packaging %s %s (the dockershim %s runs on): %w", p.Shim.Release.Release, p.Variant, p.Release.Release, err)
					}
				}
				if !p.Missing() && !p.ShimMissing() {
					rel, _ := filepath.Rel(m.Root, filepath.Dir(p.Deb))
					fmt.Fprintf(s.Err, "==> repo: %s %s: the packages in %s (make package VERSION=%s VARIANT=%s makes them again)\n", p.Release.Release, p.Variant, rel, p.Release.Release, p.Variant)
					continue
				}
				kf := &kubeletFlags{buildFlags: buildFlags{release: p.Release.Release, variant: string(p.Variant)}}
				if err := runPackage(cmd.Context(), s, g, kf); err != nil {
					return fmt.Errorf("packaging %s %s: %w", p.Release.Release, p.Variant, err)
				}
			}
			fmt.Fprintf(s.Err, "==> repo: signing and indexing %d RPMs and %d .debs\n", len(repo.RPMs(pkgs)), len(repo.Debs(pkgs)))
			res, err := repo.Build(cmd.Context(), repo.Options{Matrix: m, Packages: pkgs, Key: f.key, URL: f.url, Log: s.Err})
			if err != nil {
				return err
			}
			kind := "key " + res.Fingerprint
			if res.Throwaway {
				kind = "THROWAWAY key " + res.Fingerprint + " (made for this run, secret not kept)"
			}
			fmt.Fprintf(s.Out, "%d repositories, one per minor, signed with %s, in %s\n", len(res.Minors), kind, time.Since(start).Round(100*time.Millisecond))
			for _, mr := range res.Minors {
				rel, _ := filepath.Rel(m.Root, mr.Dir)
				fmt.Fprintf(s.Out, "%s: %d RPMs (yum/) and %d .debs (apt/, suite %s), served at %s\n", rel, len(mr.RPMs), len(mr.Debs), repo.Suite, mr.URL)
				fmt.Fprintf(s.Out, "  yum/dnf: copy %s/%s to /etc/yum.repos.d/\n", rel, repo.RepoFile)
				fmt.Fprintf(s.Out, "  apt:     copy %s/%s to %s and %s/%s to /etc/apt/sources.list.d/:\n    %s\n", rel, repo.KeyGPG, repo.Keyring, rel, repo.ListFile, mr.ListLine)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.releases, "releases", "", "releases to publish, space separated (default: every release built here)")
	cmd.Flags().StringVar(&f.key, "gpg-key", "", "signing key: a key id or fingerprint in your keyring, or a secret key file (default: a throwaway key)")
	cmd.Flags().StringVar(&f.url, "url", "", "where the repositories will be served, each minor under <url>/v<major>.<minor>, for the .repo file and the sources.list line (default: file:// of _output/repo)")
	return cmd
}

func newCheckRepoCmd(s Streams, g *globals) *cobra.Command {
	f := &repoFlags{}
	cmd := &cobra.Command{
		Use:   "check-repo",
		Short: "Check _output/repo/'s repositories with dnf and apt in scratch roots: each minor's alone, every package installed, tampered packages and metadata refused, nodes running the official packages upgraded to ours and rolled back, the upgrade from the previous package revision",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, pkgs, err := f.packages(g)
			if err != nil {
				return err
			}
			start := time.Now()
			fmt.Fprintf(s.Err, "==> check-repo: %d packages, each from both repositories\n", len(pkgs))
			res, err := repo.Check(cmd.Context(), repo.CheckOptions{Matrix: m, Packages: pkgs, Log: s.Err})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "repositories checked in %s: %d packages installed by dnf and by apt, %d tamperings refused, %d official nodes upgraded to ours and rolled back (%s), %d upgrades from the previous revision\n",
				time.Since(start).Round(100*time.Millisecond), len(res.Installed), len(res.Refused), len(res.Nodes), strings.Join(res.Nodes, ", "), len(res.Upgraded))
			return nil
		},
	}
	cmd.Flags().StringVar(&f.releases, "releases", "", "releases the repository holds, space separated (default: every release built here)")
	return cmd
}
