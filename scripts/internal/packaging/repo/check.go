package repo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/rpm"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/tools/execx"
)

// CheckOptions is one make check-repo: the published repository checked
// with the real clients (dnf and apt) against copies of its files.
type CheckOptions struct {
	Matrix   *matrix.Matrix
	Packages []Package
	Log      io.Writer
}

// Refusal is one tampering and what the client said.
type Refusal struct {
	Client, Tampering, Said string
}

// CheckResult says what was installed and refused.
type CheckResult struct {
	Installed []string
	Refused   []Refusal
	Upgraded  []string
}

// checker holds one check's scratch directory: a copy of the repository
// (tampered copies beside it), the stand-in packages and every client root.
type checker struct {
	o       CheckOptions
	scratch string
	// url is the published repository's; the copies' file: URLs replace it
	// in the operator's .repo file and sources.list line.
	url string
	n   int
	// el7 stands in for CentOS 7's libraries (glibc 2.17, the floor) and
	// Ubuntu 16.04's; el9 for RHEL 9's (glibc 2.34) and Ubuntu 22.04's,
	// where the packages built before the floor (needing 2.34) installed.
	el7, el9 standin
}

// standin is what the kubelet packages require and this machine cannot
// install into a scratch root, for one era of distributions: an RPM in a
// yum repository of its own and a .deb.
type standin struct {
	yumRepo, deb string
}

// Check installs every package of the repository with dnf and apt into
// scratch roots and runs the kubelet found there, shows each client
// refusing a tampered package and tampered metadata, and upgrades from
// the previous package revision (built from the commit that made it) to
// the published one. Nothing outside its scratch directory (under
// _output) is written; the gpg agents the clients start are stopped.
func Check(ctx context.Context, o CheckOptions) (*CheckResult, error) {
	if len(o.Packages) == 0 {
		return nil, fmt.Errorf("no release to check")
	}
	dir := Dir(o.Matrix)
	repoText, err := os.ReadFile(filepath.Join(dir, RepoFile))
	if err != nil {
		return nil, fmt.Errorf("no repository to check (make repo): %w", err)
	}
	m := regexp.MustCompile(`(?m)^baseurl=(.*)/yum$`).FindSubmatch(repoText)
	if m == nil {
		return nil, fmt.Errorf("%s: no baseurl=<url>/yum line", filepath.Join(dir, RepoFile))
	}
	scratch, err := os.MkdirTemp(o.Matrix.OutputDir(), ".repo-check-")
	if err != nil {
		return nil, err
	}
	defer func() {
		stopAgents(scratch)
		fsutil.RemoveAll(scratch)
	}()
	c := &checker{o: o, scratch: scratch, url: string(m[1])}
	if c.el7, err = c.makeStandin(ctx, "centos7", 17, "xenial", "libc6 (= 2.23), iptables (= 1.6.0), mount (= 2.27.1)"); err != nil {
		return nil, fmt.Errorf("the stand-in packages: %w", err)
	}
	if c.el9, err = c.makeStandin(ctx, "el9", 34, "jammy", "libc6 (= 2.35), iptables (= 1.8.7), mount (= 2.37.2)"); err != nil {
		return nil, fmt.Errorf("the stand-in packages: %w", err)
	}
	good, err := c.copyRepo(dir, "published")
	if err != nil {
		return nil, err
	}
	res := &CheckResult{}
	for _, p := range o.Packages {
		if err := c.installBoth(ctx, good, p); err != nil {
			return nil, err
		}
		res.Installed = append(res.Installed, p.Version)
	}
	refused, err := c.tamper(ctx, dir, o.Packages[len(o.Packages)-1])
	res.Refused = refused
	if err != nil {
		return res, err
	}
	for _, p := range o.Packages {
		pr := p.Release.PackageRevision
		switch {
		case p.Variant != matrix.Patched || pr == nil:
			continue
		case pr.Previous == "":
			c.logf("%s: no packageRevision.previous in versions.yaml: the upgrade from %s is not checked", p.Version, p.Release.PreviousPackageVersion(p.Variant))
			continue
		}
		if err := c.upgrade(ctx, good, p); err != nil {
			return res, err
		}
		res.Upgraded = append(res.Upgraded, p.Release.PreviousPackageVersion(p.Variant)+" -> "+p.Version)
	}
	return res, nil
}

func (c *checker) logf(format string, args ...any) { fmt.Fprintf(c.o.Log, "    "+format+"\n", args...) }

func (c *checker) dir(name string) string {
	c.n++
	return filepath.Join(c.scratch, fmt.Sprintf("%02d-%s", c.n, name))
}

// copyRepo copies the published repository, for one client run or one
// tampering.
func (c *checker) copyRepo(src, name string) (string, error) {
	dst := c.dir("repo-" + name)
	return dst, fsutil.CopyDir(src, dst, true, nil)
}

// installBoth installs p from repo with both clients and runs the kubelet
// each put in place.
func (c *checker) installBoth(ctx context.Context, repo string, p Package) error {
	nvr, err := rpm.NVR(p.Release, p.Version)
	if err != nil {
		return err
	}
	want, err := c.released(p)
	if err != nil {
		return err
	}
	root := c.dir("dnf-" + p.Version)
	out, err := c.dnf(ctx, c.el7, root, repo, nil, "install", nvr)
	if err != nil {
		return fmt.Errorf("dnf install %s from the yum repository: %w", nvr, err)
	}
	if err := c.installed(ctx, "dnf", root, p, want); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	root = c.dir("apt-" + p.Version)
	if out, err = c.apt(ctx, c.el7, root, repo, "install", "kubelet="+p.Version); err != nil {
		return fmt.Errorf("apt-get install kubelet=%s from the apt repository: %w", p.Version, err)
	}
	if err := c.installed(ctx, "apt", root, p, want); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// installed checks root holds p's kubelet (the released binary, as
// CHECKSUMS records it) and that it runs.
func (c *checker) installed(ctx context.Context, client, root string, p Package, want string) error {
	bin := filepath.Join(root, "usr", "bin", "kubelet")
	got, err := checksums.SHA256(bin)
	if err != nil {
		return fmt.Errorf("%s: %s installed no kubelet: %w", p.Version, client, err)
	}
	if got != want {
		return fmt.Errorf("%s: the kubelet %s installed has sha256 %s, the released one %s", p.Version, client, got, want)
	}
	// Run from the host: the scratch root has no libc (the stand-in only
	// provides the name), and the binary needs glibc >= 2.17 only.
	out, err := execx.Run(ctx, execx.Cmd{Name: bin, Args: []string{"--version"}, Timeout: time.Minute})
	if err != nil {
		return fmt.Errorf("%s: the kubelet %s installed does not run: %w", p.Version, client, err)
	}
	if ver := strings.TrimSpace(string(out)); !strings.Contains(ver, p.Release.GitVersion(p.Variant)) {
		return fmt.Errorf("%s: the kubelet %s installed says %q, want %s", p.Version, client, ver, p.Release.GitVersion(p.Variant))
	}
	c.logf("%-4s installed kubelet %s: sha256 %s, `kubelet --version`: %s", client, p.Version, got[:12], strings.TrimSpace(string(out)))
	return nil
}

// tamper shows each client refusing what was changed after signing, each
// on its own copy: dnf a package's bytes, a package re-signed by another
// key with its metadata regenerated (refused by repo_gpgcheck, and with
// that off, by gpgcheck), and apt InRelease and a package's bytes.
func (c *checker) tamper(ctx context.Context, published string, p Package) ([]Refusal, error) {
	nvr, err := rpm.NVR(p.Release, p.Version)
	if err != nil {
		return nil, err
	}
	var out []Refusal
	var failed error
	// refuse tampers a copy with edit and wants run to fail for want; after
	// a failure the remaining cases are not run.
	refuse := func(client, what, want string, run func(repo string) (string, error), edit func(repo string) error) {
		if failed == nil {
			failed = c.refuse(client, what, want, published, p, run, edit, &out)
		}
	}
	dnfInstall := func(repoEdit func(string) string) func(string) (string, error) {
		return func(repo string) (string, error) {
			return c.dnf(ctx, c.el7, c.dir("dnf-tampered"), repo, repoEdit, "install", nvr)
		}
	}
	aptInstall := func(repo string) (string, error) {
		return c.apt(ctx, c.el7, c.dir("apt-tampered"), repo, "install", "kubelet="+p.Version)
	}
	rpmIn := func(repo string) (string, error) {
		files, err := filepath.Glob(filepath.Join(repo, "yum", "Packages", nvr+".*.rpm"))
		if err != nil || len(files) != 1 {
			return "", fmt.Errorf("%s not in the yum repository (%v)", nvr, files)
		}
		return files[0], nil
	}
	resign := func(repo string) error {
		f, err := rpmIn(repo)
		if err != nil {
			return err
		}
		other, err := newSigner(ctx, "")
		if err != nil {
			return err
		}
		defer other.close()
		if _, err := execx.Run(ctx, execx.Cmd{Name: "rpmsign", Args: []string{"--delsign", f}}); err != nil {
			return err
		}
		if err := other.signRPMs(ctx, f); err != nil {
			return err
		}
		// What anyone who can write to the mirror can do; repomd.xml.asc
		// stays the old one, since only the key's owner can renew it.
		_, err = execx.Run(ctx, execx.Cmd{Name: "createrepo_c", Args: []string{"--quiet", "--update", filepath.Join(repo, "yum")}, Timeout: 10 * time.Minute})
		return err
	}
	refuse("dnf", "one byte of the signed RPM changed", "incorrect checksum", dnfInstall(nil), func(repo string) error {
		f, err := rpmIn(repo)
		if err != nil {
			return err
		}
		return flipByte(f)
	})
	refuse("dnf", "the RPM re-signed by another key and the metadata regenerated", "repomd.xml GPG signature verification error", dnfInstall(nil), resign)
	refuse("dnf", "the RPM re-signed by another key and the metadata regenerated, repo_gpgcheck=0", "GPG check FAILED",
		dnfInstall(func(s string) string { return strings.Replace(s, "repo_gpgcheck=1", "repo_gpgcheck=0", 1) }), resign)
	refuse("apt", "one hash in InRelease changed", "BADSIG", aptInstall, func(repo string) error {
		f := filepath.Join(repo, "apt", "dists", Suite, "InRelease")
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		// The first digit of the first SHA256 line's hash.
		re := regexp.MustCompile(`(?m)^SHA256:\n ([0-9a-f])`)
		loc := re.FindSubmatchIndex(data)
		if loc == nil {
			return fmt.Errorf("%s has no SHA256 section", f)
		}
		if data[loc[2]] == '0' {
			data[loc[2]] = '1'
		} else {
			data[loc[2]] = '0'
		}
		return os.WriteFile(f, data, 0o644)
	})
	refuse("apt", "one byte of the .deb changed", "Hash Sum mismatch", aptInstall, func(repo string) error {
		return flipByte(filepath.Join(repo, "apt", "pool", Component, "k", "kubelet", filepath.Base(p.Deb)))
	})
	return out, failed
}

// refuse is one tampering: a copy of published changed by edit, run
// against it, which must fail for want (the client's words).
func (c *checker) refuse(client, what, want, published string, p Package, run func(repo string) (string, error), edit func(repo string) error, out *[]Refusal) error {
	repo, err := c.copyRepo(published, "tampered")
	if err != nil {
		return err
	}
	if err := edit(repo); err != nil {
		return fmt.Errorf("tampering (%s): %w", what, err)
	}
	said, err := run(repo)
	if err == nil {
		return fmt.Errorf("%s installed %s from a repository with %s", client, p.Version, what)
	}
	line := matchingLine(said+"\n"+err.Error(), want)
	if line == "" {
		return fmt.Errorf("%s refused %s, but not for it (want %q):\n%s", client, what, want, said)
	}
	// A skipped repository is no refusal: `yum upgrade` would go on
	// without it, and nodes would stay on the old kubelet unnoticed.
	if skipped := matchingLine(said, "Ignoring repositories:"); skipped != "" {
		return fmt.Errorf("%s skipped the repository with %s instead of failing (%q): the .repo file must set skip_if_unavailable=False", client, what, skipped)
	}
	c.logf("%-4s refused %s: %s", client, what, line)
	*out = append(*out, Refusal{client, what, line})
	return nil
}

// upgrade installs the previous revision's packages as operators had
// them (loose files, no repository), changes the configuration file an
// operator edits, and upgrades from the repository with each client: the
// new kubelet is in place, the edit kept.
func (c *checker) upgrade(ctx context.Context, repo string, p Package) error {
	prevDeb, prevRPM, err := BuildPrevious(ctx, c.o.Matrix, p.Release, p.Variant, c.o.Log)
	if err != nil {
		return err
	}
	want, err := c.released(p)
	if err != nil {
		return err
	}
	nvr, err := rpm.NVR(p.Release, p.Version)
	if err != nil {
		return err
	}
	prev := p.Release.PreviousPackageVersion(p.Variant)
	prevNVR, err := rpm.NVR(p.Release, prev)
	if err != nil {
		return err
	}
	edit := "KUBELET_ARGS=\"--v=2\" # the operator's edit\n"
	dnf := func(ctx context.Context, root, repo string, args ...string) (string, error) {
		return c.dnf(ctx, c.el9, root, repo, nil, args...)
	}
	apt := func(ctx context.Context, root, repo string, args ...string) (string, error) {
		return c.apt(ctx, c.el9, root, repo, args...)
	}
	rpmQuery := func(root string) (string, error) {
		out, err := execx.Run(ctx, execx.Cmd{Name: "rpm", Args: []string{"--root", root, "-q", "--qf", "%{NAME}-%{VERSION}-%{RELEASE}", "kubelet"}})
		return strings.TrimSpace(string(out)), err
	}
	dpkgQuery := func(root string) (string, error) {
		out, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-query", Args: []string{"--admindir", filepath.Join(root, "var", "lib", "dpkg"), "-W", "-f", "${Version}", "kubelet"}})
		return strings.TrimSpace(string(out)), err
	}
	for _, cl := range []struct {
		client, config   string
		install, upgrade []string
		// installed says which version root holds: from, then to.
		installed func(root string) (string, error)
		from, to  string
		run       func(ctx context.Context, root, repo string, args ...string) (string, error)
	}{
		{"dnf", "etc/sysconfig/kubelet", []string{"install", prevRPM}, []string{"upgrade", nvr}, rpmQuery, prevNVR, nvr, dnf},
		// --force-confold: as unattended upgrades run dpkg.
		{"apt", "etc/default/kubelet", []string{"install", prevDeb}, []string{"install", "-o", "DPkg::Options::=--force-confold", "kubelet=" + p.Version},
			dpkgQuery, prev, p.Version, apt},
	} {
		root := c.dir(cl.client + "-upgrade")
		if _, err := cl.run(ctx, root, repo, cl.install...); err != nil {
			return fmt.Errorf("%s: installing the previous revision %s: %w", cl.client, prev, err)
		}
		if got, err := cl.installed(root); got != cl.from {
			return fmt.Errorf("%s: installing the previous revision gave %q, want %s (%v)", cl.client, got, cl.from, err)
		}
		conf := filepath.Join(root, cl.config)
		old, err := os.ReadFile(conf)
		if err != nil {
			return fmt.Errorf("%s: the previous revision has no /%s: %w", cl.client, cl.config, err)
		}
		if err := os.WriteFile(conf, append(old, edit...), 0o644); err != nil {
			return err
		}
		if _, err := cl.run(ctx, root, repo, cl.upgrade...); err != nil {
			return fmt.Errorf("%s: upgrading %s to %s: %w", cl.client, prev, p.Version, err)
		}
		if got, err := cl.installed(root); got != cl.to {
			return fmt.Errorf("%s: after the upgrade %q is installed, want %s (%v)", cl.client, got, cl.to, err)
		}
		if got, _ := checksums.SHA256(filepath.Join(root, "usr", "bin", "kubelet")); got != want {
			return fmt.Errorf("%s: after the upgrade the kubelet's sha256 is %s, want the released %s", cl.client, got, want)
		}
		if now, _ := os.ReadFile(conf); !bytes.Contains(now, []byte(edit)) {
			return fmt.Errorf("%s: the upgrade lost the operator's edit of /%s:\n%s", cl.client, cl.config, now)
		}
		c.logf("%-4s upgraded %s -> %s; /%s kept the operator's edit; the kubelet is the released one", cl.client, cl.from, cl.to, cl.config)
	}
	return nil
}

// dnf runs dnf on root with its own configuration: the operator's .repo
// file, pointed at repo (and changed by edit, if set), and the stand-ins'
// repository.
func (c *checker) dnf(ctx context.Context, st standin, root, repo string, edit func(string) string, args ...string) (string, error) {
	reposd := filepath.Join(root + ".repos.d")
	if err := os.MkdirAll(reposd, 0o755); err != nil {
		return "", err
	}
	text, err := os.ReadFile(filepath.Join(repo, RepoFile))
	if err != nil {
		return "", err
	}
	s := strings.ReplaceAll(string(text), c.url, "file://"+repo)
	if edit != nil {
		s = edit(s)
	}
	standin := fmt.Sprintf("[standin]\nname=test-only stand-ins (not the operator's repository)\nbaseurl=file://%s\ngpgcheck=0\n", st.yumRepo)
	conf := filepath.Join(root + ".dnf.conf")
	if err := os.WriteFile(filepath.Join(reposd, RepoFile), []byte(s), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(reposd, "standin.repo"), []byte(standin), 0o644); err != nil {
		return "", err
	}
	// skip_if_unavailable=True in [main], as Fedora's and Debian's dnf.conf
	// ship it: the operator's .repo file must still make a repository that
	// fails its checks an error, not one dnf skips.
	if err := os.WriteFile(conf, []byte("[main]\nreposdir="+reposd+"\ninstall_weak_deps=False\nskip_if_unavailable=True\n"), 0o644); err != nil {
		return "", err
	}
	defer stopAgents(root)
	out, err := execx.Run(ctx, execx.Cmd{Name: "dnf", Args: append([]string{"-y", "--config", conf, "--installroot", root, "--releasever", "7", "--setopt=reposdir=" + reposd}, args...), Timeout: 10 * time.Minute})
	return string(out), err
}

// apt runs apt-get on root with a configuration of its own (APT_CONFIG:
// nothing of the machine's apt configuration, lists, caches or dpkg
// database): the operator's sources.list line pointed at repo, its
// keyring in the root, and the stand-in .deb installed with the first
// command.
func (c *checker) apt(ctx context.Context, st standin, root, repo string, args ...string) (string, error) {
	conf := filepath.Join(root, "etc", "apt", "apt.conf")
	if _, err := os.Stat(conf); err != nil {
		for _, d := range []string{"etc/apt/sources.list.d", "etc/apt/apt.conf.d", "etc/apt/preferences.d", "etc/apt/trusted.gpg.d", "etc/apt/keyrings",
			"var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				return "", err
			}
		}
		if err := os.WriteFile(filepath.Join(root, "var", "lib", "dpkg", "status"), nil, 0o644); err != nil {
			return "", err
		}
		keyring := filepath.Join(root, strings.TrimPrefix(Keyring, "/"))
		if err := fsutil.CopyFile(filepath.Join(repo, KeyGPG), keyring); err != nil {
			return "", err
		}
		line, err := os.ReadFile(filepath.Join(repo, ListFile))
		if err != nil {
			return "", err
		}
		l := strings.ReplaceAll(strings.ReplaceAll(string(line), c.url, "file:"+repo), Keyring, keyring)
		if err := os.WriteFile(filepath.Join(root, "etc", "apt", "sources.list.d", ListFile), []byte(l), 0o644); err != nil {
			return "", err
		}
		cfg := fmt.Sprintf("Dir %q;\nDir::State::status %q;\nDPkg::Options { \"--root=%s\"; \"--admindir=%s\"; \"--log=%s\"; };\nDebug::NoLocking \"true\";\nAPT::Sandbox::User \"root\";\n",
			root+"/", filepath.Join(root, "var/lib/dpkg/status"), root, filepath.Join(root, "var/lib/dpkg"), filepath.Join(root, "var/log/dpkg.log"))
		if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
			return "", err
		}
		args = append(append([]string{}, args...), st.deb)
	}
	env := []string{"APT_CONFIG=" + conf, "DEBIAN_FRONTEND=noninteractive"}
	out, err := execx.Run(ctx, execx.Cmd{Name: "apt-get", Args: []string{"update"}, Env: env, Timeout: 10 * time.Minute})
	if err == nil && strings.Contains(string(out), "\nW: ") || err == nil && strings.Contains(string(out), "\nE: ") {
		err = fmt.Errorf("apt-get update warned")
	}
	if err != nil {
		return string(out), err
	}
	more, err := execx.Run(ctx, execx.Cmd{Name: "apt-get", Args: append([]string{"-y"}, args...), Env: env, Timeout: 10 * time.Minute})
	return string(out) + string(more), err
}

// makeStandin builds the stand-ins of one era, each named for the
// distribution it stands in for: an RPM providing glibc, iptables and
// util-linux, and the symbol versions of glibc 2.<glibcMinor> and no
// newer (so a kubelet needing a newer glibc does not install), in a yum
// repository of its own; and a .deb providing debProvides. Neither goes
// into the operator's repository.
func (c *checker) makeStandin(ctx context.Context, era string, glibcMinor int, debEra, debProvides string) (standin, error) {
	top := filepath.Join(c.scratch, era+"-standin")
	name := era + "-glibc-iptables-util-linux-standin"
	glibc, versions := fmt.Sprintf("2.%d", glibcMinor), glibcVersions(glibcMinor)
	provides := []string{"rtld(GNU_HASH)"}
	for _, lib := range []string{"libc.so.6", "libdl.so.2", "libpthread.so.0", "libresolv.so.2", "librt.so.1", "libm.so.6"} {
		provides = append(provides, lib+"()(64bit)")
		for _, v := range versions {
			provides = append(provides, fmt.Sprintf("%s(GLIBC_%s)(64bit)", lib, v))
		}
	}
	spec := fmt.Sprintf(`Name: %s
Version: 1
Release: 1
Summary: Test-only stand-in for glibc %s, iptables and util-linux (%s)
License: Apache-2.0
BuildArch: noarch
Provides: glibc = %s, iptables, util-linux
Provides: %s
%%description
Provides the names the kubelet package requires, as %s does, for
make check-repo's scratch roots. Contains no files.
%%files
`, name, glibc, era, glibc, strings.Join(provides, ", "), era)
	specFile := filepath.Join(top, "standin.spec")
	if err := os.MkdirAll(top, 0o755); err != nil {
		return standin{}, err
	}
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		return standin{}, err
	}
	if _, err := execx.Run(ctx, execx.Cmd{Name: "rpmbuild", Args: []string{"-bb", "--define", "_topdir " + top, specFile}, Env: []string{"HOME=" + top}}); err != nil {
		return standin{}, err
	}
	st := standin{yumRepo: filepath.Join(top, "yum"), deb: filepath.Join(top, debEra+"-libc6-iptables-mount-standin_1_all.deb")}
	if err := fsutil.CopyDir(filepath.Join(top, "RPMS", "noarch"), st.yumRepo, false, nil); err != nil {
		return standin{}, err
	}
	if _, err := execx.Run(ctx, execx.Cmd{Name: "createrepo_c", Args: []string{"--quiet", st.yumRepo}}); err != nil {
		return standin{}, err
	}
	control := fmt.Sprintf(`Package: %s-libc6-iptables-mount-standin
Version: 1
Architecture: all
Maintainer: Kubelet Toolchain <toolchain@kubelet-toolchain.invalid>
Provides: %s
Description: test-only stand-in for libc6, iptables and mount (%s)
 Provides the names the kubelet package depends on, for make check-repo's
 scratch roots. Contains no files.
`, debEra, debProvides, debEra)
	deb := filepath.Join(top, "deb")
	if err := os.MkdirAll(filepath.Join(deb, "DEBIAN"), 0o755); err != nil {
		return standin{}, err
	}
	if err := os.WriteFile(filepath.Join(deb, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		return standin{}, err
	}
	_, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-deb", Args: []string{"--root-owner-group", "--build", deb, st.deb}})
	return st, err
}

// glibcVersions are the symbol versions of x86_64 glibc up to 2.<minor>
// (glibc added none at 2.19-2.21 and 2.31).
func glibcVersions(minor int) []string {
	out := []string{"2.2.5", "2.2.6", "2.3", "2.3.2", "2.3.3", "2.3.4"}
	for m := 4; m <= minor; m++ {
		if (m >= 19 && m <= 21) || m == 31 {
			continue
		}
		out = append(out, fmt.Sprintf("2.%d", m))
	}
	return out
}

// stopAgents stops the gpg agents gpg started for keyrings under dir
// (dnf checks repomd.xml.asc with a keyring in its cache).
func stopAgents(dir string) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "pubring" || strings.Contains(d.Name(), "gnupg")) {
			execx.Run(context.Background(), execx.Cmd{Name: "gpgconf", Args: []string{"--homedir", p, "--kill", "all"}, Timeout: time.Minute})
			return filepath.SkipDir
		}
		return nil
	})
}

// released is the sha256 CHECKSUMS records for p's kubelet, the one
// every package of it must install.
func (c *checker) released(p Package) (string, error) {
	sums, err := checksums.Load(filepath.Join(c.o.Matrix.Root, checksums.FileName))
	if err != nil {
		return "", err
	}
	key := checksums.Key(p.Release.Release, string(p.Variant))
	if sum, ok := sums[key]; ok {
		return sum, nil
	}
	return "", fmt.Errorf("%s records no sha256 for %s", checksums.FileName, key)
}

// flipByte changes one byte near the end of file (inside an RPM's or a
// .deb's compressed payload), keeping its size.
func flipByte(file string) error {
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	b := make([]byte, 1)
	off := fi.Size() - 100
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	return err
}

// matchingLine is the first line of out containing want.
func matchingLine(out, want string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, want) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
