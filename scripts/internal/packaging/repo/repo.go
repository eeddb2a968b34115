// Package repo publishes packaged releases as the signed repositories
// operators install kubelets from, under _output/repo/: a yum repository
// (every RPM signed, createrepo_c metadata, repomd.xml signed) and an apt
// repository (one suite holding every version: the pool, Packages, and
// Release signed as InRelease and Release.gpg), the public key, and the
// .repo file and sources.list line to copy. Both variants of a release sit
// side by side: their package versions differ (patched sorts above
// vanilla), so `install kubelet-<version>` picks either. The packages are
// signed copies; make package's dist/ stays as it is.
package repo

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/dist"
	"kubelet-toolchain/scripts/internal/packaging/rpm"
	"kubelet-toolchain/tools/execx"
)

// The names an operator's configuration carries.
const (
	// ID is the yum repository id, the apt list and keyring names.
	ID = "kubelet-toolchain"
	// Suite and Component are the apt repository's only ones.
	Suite, Component = "stable", "main"
	// KeyASC is the armored public key (yum's gpgkey); KeyGPG the same
	// key as a binary keyring, which apt's signed-by reads on every apt
	// that has the option (1.1 on, so Ubuntu 16.04's 1.2); armored ones
	// need apt 1.4.
	KeyASC, KeyGPG = "KEY.asc", "KEY.gpg"
	// RepoFile and ListFile are what operators copy into
	// /etc/yum.repos.d and /etc/apt/sources.list.d.
	RepoFile, ListFile = ID + ".repo", ID + ".list"
	// Keyring is where ListFile's signed-by expects KeyGPG on a node.
	Keyring = "/etc/apt/keyrings/" + ID + ".gpg"
)

// Dir is the published repository.
func Dir(m *matrix.Matrix) string { return filepath.Join(m.OutputDir(), "repo") }

// Package is one release+variant's packages in its dist directory.
type Package struct {
	Release *matrix.Release
	Variant matrix.Variant
	// Version is the package version (1.9.11+k19-fixes.4).
	Version string
	// Deb and RPM are the dist files.
	Deb, RPM string
}

// Packages lists the packages of releases, both variants each.
func Packages(m *matrix.Matrix, releases []*matrix.Release) []Package {
	var out []Package
	for _, r := range releases {
		for _, v := range []matrix.Variant{matrix.Vanilla, matrix.Patched} {
			version := r.PackageVersion(v)
			d := dist.Dir(m, r)
			out = append(out, Package{Release: r, Variant: v, Version: version,
				Deb: filepath.Join(d, dist.NamesFor(version).Deb), RPM: filepath.Join(d, rpm.RPMFileName(version))})
		}
	}
	return out
}

// Missing reports whether p's dist lacks its packages (make package makes them).
func (p Package) Missing() bool {
	for _, f := range []string{p.Deb, p.RPM} {
		if _, err := os.Stat(f); err != nil {
			return true
		}
	}
	return false
}

// Options is one make repo.
type Options struct {
	Matrix   *matrix.Matrix
	Packages []Package
	// Key is GPG_KEY: a key id or fingerprint in the caller's keyring, or
	// a file holding a secret key; "" makes a throwaway key.
	Key string
	// URL is where the repository will be served (REPO_URL); "" is the
	// directory itself, as a file: URL.
	URL string
	Log io.Writer
}

// Result says what was published.
type Result struct {
	Dir, URL           string
	Fingerprint, UID   string
	Throwaway          bool
	RPMs, Debs         []string
	RepoFile, ListLine string
}

// Build writes the repositories into a scratch directory beside Dir and
// moves it into place only when complete: a failure leaves the previous
// repository as it was.
func Build(ctx context.Context, o Options) (*Result, error) {
	if len(o.Packages) == 0 {
		return nil, fmt.Errorf("no release to publish")
	}
	dst := Dir(o.Matrix)
	res := &Result{Dir: dst, URL: strings.TrimSuffix(o.URL, "/")}
	if res.URL == "" {
		res.URL = "file://" + dst
	}
	if err := os.MkdirAll(o.Matrix.OutputDir(), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(o.Matrix.OutputDir(), ".repo-")
	if err != nil {
		return nil, err
	}
	defer fsutil.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	for _, p := range o.Packages {
		if err := checkSums(p); err != nil {
			return nil, err
		}
	}
	s, err := newSigner(ctx, o.Key)
	if err != nil {
		return nil, err
	}
	defer s.close()
	res.Fingerprint, res.UID, res.Throwaway = s.fpr, s.uid, s.throwaway
	if s.throwaway {
		fmt.Fprintf(o.Log, "    signing with a THROWAWAY key made for this run (%s): its secret is not kept, so clients trust this repository only until the next make repo; publish with GPG_KEY=<your key id or secret key file>\n", s.fpr)
	} else {
		fmt.Fprintf(o.Log, "    signing with %s (%s)\n", s.fpr, s.uid)
	}
	if res.RPMs, err = yumRepo(ctx, s, filepath.Join(tmp, "yum"), o.Packages); err != nil {
		return nil, fmt.Errorf("yum repository: %w", err)
	}
	if res.Debs, err = aptRepo(ctx, s, filepath.Join(tmp, "apt"), o.Packages); err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	for _, k := range []struct {
		name  string
		armor bool
	}{{KeyASC, true}, {KeyGPG, false}} {
		data, err := s.publicKey(ctx, k.armor)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, k.name), data, 0o644); err != nil {
			return nil, err
		}
	}
	res.RepoFile, res.ListLine = repoFile(res.URL), listLine(res.URL)
	if err := os.WriteFile(filepath.Join(tmp, RepoFile), []byte(res.RepoFile), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, ListFile), []byte(res.ListLine+"\n"), 0o644); err != nil {
		return nil, err
	}
	if err := fsutil.ReplaceDir(tmp, dst); err != nil {
		return nil, err
	}
	return res, nil
}

// checkSums checks p's packages against their dist's SHA256SUMS, so what
// is signed is what make package wrote.
func checkSums(p Package) error {
	dir := filepath.Dir(p.Deb)
	if p.Missing() {
		return fmt.Errorf("release %s %s: no packages %s in %s (make package VERSION=%s VARIANT=%s)", p.Release.Release, p.Variant, p.Version, dir, p.Release.Release, p.Variant)
	}
	_, err := execx.Run(context.Background(), execx.Cmd{Name: "sha256sum", Args: []string{"--check", "--ignore-missing", "--quiet", dist.SumsFile}, Dir: dir})
	if err != nil {
		return fmt.Errorf("release %s %s: %s does not match the packages it lists (make package again): %w", p.Release.Release, p.Variant, filepath.Join(dir, dist.SumsFile), err)
	}
	return nil
}

// yumRepo copies the RPMs under their N-V-R.A names, signs them, writes
// the metadata and signs repomd.xml (repomd.xml.asc, what repo_gpgcheck
// reads).
func yumRepo(ctx context.Context, s *signer, dir string, pkgs []Package) ([]string, error) {
	pkgDir := filepath.Join(dir, "Packages")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		return nil, err
	}
	var files, names []string
	for _, p := range pkgs {
		nvra, err := execx.Run(ctx, execx.Cmd{Name: "rpm", Args: []string{"-qp", "--nosignature", "--qf", "%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}", p.RPM}})
		if err != nil {
			return nil, err
		}
		name := strings.TrimSpace(string(nvra)) + ".rpm"
		dst := filepath.Join(pkgDir, name)
		if err := fsutil.CopyFile(p.RPM, dst); err != nil {
			return nil, err
		}
		files, names = append(files, dst), append(names, name)
	}
	if err := s.signRPMs(ctx, files...); err != nil {
		return nil, err
	}
	if _, err := execx.Run(ctx, execx.Cmd{Name: "createrepo_c", Args: []string{"--quiet", dir}, Timeout: 10 * time.Minute}); err != nil {
		return nil, err
	}
	repomd := filepath.Join(dir, "repodata", "repomd.xml")
	return names, s.detachSign(ctx, repomd, repomd+".asc", true)
}

// aptRepo lays the .debs out in a pool, writes the suite's Packages and
// Release with apt-ftparchive (which, unlike reprepro, keeps every version
// of a package in one suite) and signs Release as InRelease and
// Release.gpg (apt before 1.1 reads only the latter).
func aptRepo(ctx context.Context, s *signer, dir string, pkgs []Package) ([]string, error) {
	pool := filepath.Join(dir, "pool", Component, "k", "kubelet")
	bin := filepath.Join(dir, "dists", Suite, Component, "binary-amd64")
	for _, d := range []string{pool, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	var names []string
	for _, p := range pkgs {
		name := filepath.Base(p.Deb)
		if err := fsutil.CopyFile(p.Deb, filepath.Join(pool, name)); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var packages bytes.Buffer
	if _, err := execx.Run(ctx, execx.Cmd{Name: "apt-ftparchive", Args: []string{"packages", "pool"}, Dir: dir, Stdout: &packages, Timeout: 10 * time.Minute}); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(bin, "Packages"), packages.Bytes(), 0o644); err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(packages.Bytes())
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(bin, "Packages.gz"), gz.Bytes(), 0o644); err != nil {
		return nil, err
	}
	var release bytes.Buffer
	args := []string{}
	for k, v := range map[string]string{"Origin": ID, "Label": ID, "Suite": Suite, "Codename": Suite, "Architectures": "amd64", "Components": Component,
		"Description": "Kubelets of the dockershim era (1.7 .. 1.23), patched and vanilla, from the kubelet toolchain"} {
		args = append(args, "-o", "APT::FTPArchive::Release::"+k+"="+v)
	}
	// Written after the index files, outside the suite directory until
	// complete: apt-ftparchive would otherwise list a Release in itself.
	if _, err := execx.Run(ctx, execx.Cmd{Name: "apt-ftparchive", Args: append(args, "release", filepath.Join("dists", Suite)), Dir: dir, Stdout: &release}); err != nil {
		return nil, err
	}
	suite := filepath.Join(dir, "dists", Suite)
	rel := filepath.Join(suite, "Release")
	if err := os.WriteFile(rel, release.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := s.clearSign(ctx, rel, filepath.Join(suite, "InRelease")); err != nil {
		return nil, err
	}
	return names, s.detachSign(ctx, rel, rel+".gpg", false)
}

// repoFile is the yum/dnf repository definition for /etc/yum.repos.d: both
// checks on, and a repository that fails them is an error, not skipped.
func repoFile(url string) string {
	return fmt.Sprintf(`[%s]
name=Kubelets of the dockershim era, patched (kubelet toolchain)
baseurl=%s/yum
enabled=1
gpgcheck=1
repo_gpgcheck=1
skip_if_unavailable=False
gpgkey=%s/%s
`, ID, url, url, KeyASC)
}

// listLine is the sources.list line for /etc/apt/sources.list.d, trusting
// only this repository's key (signed-by), not the whole system keyring.
func listLine(url string) string {
	return fmt.Sprintf("deb [arch=amd64 signed-by=%s] %s/apt %s %s", Keyring, url, Suite, Component)
}
