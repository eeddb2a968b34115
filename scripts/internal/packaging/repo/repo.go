// Package repo publishes packaged releases as the signed repositories
// operators install kubelets from, one per minor under _output/repo/
// (v1.9/, v1.13/, ...), as pkgs.k8s.io publishes them: `yum upgrade` and
// `apt-get upgrade` then keep a node on its minor, and moving a minor is
// changing the repository file. Each holds a yum repository (every RPM
// signed, createrepo_c metadata, repomd.xml signed) and an apt repository
// (one suite holding every version of the minor: the pool, Packages, and
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
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/semver"

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

// Dir holds the published repositories, one directory per minor.
func Dir(m *matrix.Matrix) string { return filepath.Join(m.OutputDir(), "repo") }

// Minor is the name of r's repository, the directory under Dir and the
// path under REPO_URL: v1.9 for 1.9.11, as pkgs.k8s.io names its own.
func Minor(r *matrix.Release) string {
	major, minor := r.MajorMinor()
	return "v" + major + "." + minor
}

// MinorDir is one minor's published repository.
func MinorDir(m *matrix.Matrix, minor string) string { return filepath.Join(Dir(m), minor) }

// Package is one release+variant's packages in its dist directory.
type Package struct {
	Release *matrix.Release
	Variant matrix.Variant
	// Version is the package version (1.9.11+k19-fixes.4).
	Version string
	// Deb and RPM are the dist files.
	Deb, RPM string
	// Shim is the dockershim the kubelet runs with, published beside it:
	// its own release's (1.23.17, one source package) or, for a kubelet
	// that runs on it (1.24, 1.25), that release's of the same variant.
	Shim *Shim
}

// Shim is a dockershim's packages.
type Shim struct {
	Release *matrix.Release
	Version string
	// Deb and RPM are the dist files.
	Deb, RPM string
}

// Packages lists the packages of releases, both variants each.
func Packages(m *matrix.Matrix, releases []*matrix.Release) []Package {
	var out []Package
	shimRelease, _ := m.ShimRelease()
	for _, r := range releases {
		for _, v := range []matrix.Variant{matrix.Vanilla, matrix.Patched} {
			version := r.PackageVersion(v)
			d := dist.Dir(m, r)
			p := Package{Release: r, Variant: v, Version: version,
				Deb: filepath.Join(d, dist.NamesFor(r, version).Deb), RPM: filepath.Join(d, rpm.RPMFileName(version))}
			s := r
			if r.RunsOnShim() {
				s = shimRelease
			}
			if s != nil && dist.HasShim(s) {
				sv := s.PackageVersion(v)
				sd := dist.Dir(m, s)
				p.Shim = &Shim{Release: s, Version: sv,
					Deb: filepath.Join(sd, dist.NamesFor(s, sv).ShimDeb), RPM: filepath.Join(sd, rpm.ShimRPMFileName(sv))}
			}
			out = append(out, p)
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

// ShimMissing reports whether the dist of p's shim lacks its packages
// (make package of the shim's release makes them).
func (p Package) ShimMissing() bool {
	if p.Shim == nil {
		return false
	}
	for _, f := range []string{p.Shim.Deb, p.Shim.RPM} {
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
	Dir              string
	Fingerprint, UID string
	Throwaway        bool
	Minors           []MinorResult
}

// MinorResult is one minor's repository.
type MinorResult struct {
	Minor, Dir, URL    string
	RPMs, Debs         []string
	RepoFile, ListLine string
}

// ByMinor groups packages by their release's minor, minors in version
// order (packages keeps its order within each).
func ByMinor(pkgs []Package) (minors []string, by map[string][]Package) {
	by = map[string][]Package{}
	for _, p := range pkgs {
		mi := Minor(p.Release)
		if _, ok := by[mi]; !ok {
			minors = append(minors, mi)
		}
		by[mi] = append(by[mi], p)
	}
	sort.Slice(minors, func(i, j int) bool { return semver.Compare(minors[i]+".0", minors[j]+".0") < 0 })
	return minors, by
}

// Build writes one repository per minor of the packages into a scratch
// directory beside Dir, all signed by one key, and moves it into place
// only when complete: a failure leaves the previous repositories as they
// were. Dir holds exactly the minors of this run.
func Build(ctx context.Context, o Options) (*Result, error) {
	if len(o.Packages) == 0 {
		return nil, fmt.Errorf("no release to publish")
	}
	dst := Dir(o.Matrix)
	base := strings.TrimSuffix(o.URL, "/")
	if base == "" {
		base = "file://" + dst
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
	res := &Result{Dir: dst, Fingerprint: s.fpr, UID: s.uid, Throwaway: s.throwaway}
	if s.throwaway {
		fmt.Fprintf(o.Log, "    signing with a THROWAWAY key made for this run (%s): its secret is not kept, so clients trust this repository only until the next make repo; publish with GPG_KEY=<your key id or secret key file>\n", s.fpr)
	} else {
		fmt.Fprintf(o.Log, "    signing with %s (%s)\n", s.fpr, s.uid)
	}
	minors, by := ByMinor(o.Packages)
	for _, mi := range minors {
		mr, err := publishMinor(ctx, s, filepath.Join(tmp, mi), mi, base+"/"+mi, by[mi])
		if err != nil {
			return nil, fmt.Errorf("repository %s: %w", mi, err)
		}
		mr.Dir = filepath.Join(dst, mi)
		res.Minors = append(res.Minors, *mr)
	}
	if err := fsutil.ReplaceDir(tmp, dst); err != nil {
		return nil, err
	}
	return res, nil
}

// publishMinor writes one minor's repository into dir: what an operator
// points a node at, served at url.
func publishMinor(ctx context.Context, s *signer, dir, minor, url string, pkgs []Package) (*MinorResult, error) {
	res := &MinorResult{Minor: minor, URL: url}
	var err error
	if res.RPMs, err = yumRepo(ctx, s, filepath.Join(dir, "yum"), pkgs); err != nil {
		return nil, fmt.Errorf("yum repository: %w", err)
	}
	if res.Debs, err = aptRepo(ctx, s, filepath.Join(dir, "apt"), minor, pkgs); err != nil {
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
		if err := os.WriteFile(filepath.Join(dir, k.name), data, 0o644); err != nil {
			return nil, err
		}
	}
	res.RepoFile, res.ListLine = repoFile(minor, url), listLine(url)
	if err := os.WriteFile(filepath.Join(dir, RepoFile), []byte(res.RepoFile), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ListFile), []byte(res.ListLine+"\n"), 0o644); err != nil {
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
	dirs := []string{dir}
	if p.Shim != nil {
		if p.ShimMissing() {
			return fmt.Errorf("release %s %s: no dockershim packages %s in %s (make package VERSION=%s VARIANT=%s)", p.Release.Release, p.Variant, p.Shim.Version, filepath.Dir(p.Shim.Deb), p.Shim.Release.Release, p.Variant)
		}
		dirs = append(dirs, filepath.Dir(p.Shim.Deb))
	}
	for _, dir := range dirs {
		_, err := execx.Run(context.Background(), execx.Cmd{Name: "sha256sum", Args: []string{"--check", "--ignore-missing", "--quiet", dist.SumsFile}, Dir: dir})
		if err != nil {
			return fmt.Errorf("release %s %s: %s does not match the packages it lists (make package again): %w", p.Release.Release, p.Variant, filepath.Join(dir, dist.SumsFile), err)
		}
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
	for _, src := range RPMs(pkgs) {
		nvra, err := execx.Run(ctx, execx.Cmd{Name: "rpm", Args: []string{"-qp", "--nosignature", "--qf", "%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}", src}})
		if err != nil {
			return nil, err
		}
		name := strings.TrimSpace(string(nvra)) + ".rpm"
		dst := filepath.Join(pkgDir, name)
		if err := fsutil.CopyFile(src, dst); err != nil {
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

// RPMs and Debs are the package files of pkgs, each once: the kubelets
// and the shims they run with (two kubelets of a variant share one).
func RPMs(pkgs []Package) []string {
	return packageFiles(pkgs, func(p Package) string { return p.RPM }, func(s *Shim) string { return s.RPM })
}

func Debs(pkgs []Package) []string {
	return packageFiles(pkgs, func(p Package) string { return p.Deb }, func(s *Shim) string { return s.Deb })
}

func packageFiles(pkgs []Package, kubelet func(Package) string, shim func(*Shim) string) []string {
	var out []string
	for _, p := range pkgs {
		out = append(out, kubelet(p))
		if p.Shim != nil && !slices.Contains(out, shim(p.Shim)) {
			out = append(out, shim(p.Shim))
		}
	}
	return out
}

// aptRepo lays the .debs out in a pool, writes the suite's Packages and
// Release with apt-ftparchive (which, unlike reprepro, keeps every version
// of a package in one suite) and signs Release as InRelease and
// Release.gpg (apt before 1.1 reads only the latter).
func aptRepo(ctx context.Context, s *signer, dir, minor string, pkgs []Package) ([]string, error) {
	bin := filepath.Join(dir, "dists", Suite, Component, "binary-amd64")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for _, src := range Debs(pkgs) {
		// pool/main/<initial>/<package>/, as Debian lays pools out.
		name := filepath.Base(src)
		pkg, _, _ := strings.Cut(name, "_")
		pool := filepath.Join(dir, "pool", Component, pkg[:1], pkg)
		if err := os.MkdirAll(pool, 0o755); err != nil {
			return nil, err
		}
		if err := fsutil.CopyFile(src, filepath.Join(pool, name)); err != nil {
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
		"Description": "Kubelets " + minor + ", patched and vanilla, from the kubelet toolchain"} {
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
func repoFile(minor, url string) string {
	return fmt.Sprintf(`[%s]
name=Kubelets %s, patched (kubelet toolchain)
baseurl=%s/yum
enabled=1
gpgcheck=1
repo_gpgcheck=1
skip_if_unavailable=False
gpgkey=%s/%s
`, ID, minor, url, url, KeyASC)
}

// listLine is the sources.list line for /etc/apt/sources.list.d, trusting
// only this repository's key (signed-by), not the whole system keyring.
func listLine(url string) string {
	return fmt.Sprintf("deb [arch=amd64 signed-by=%s] %s/apt %s %s", Keyring, url, Suite, Component)
}
