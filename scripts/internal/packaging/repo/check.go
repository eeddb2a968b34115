package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/deb"
	"kubelet-toolchain/scripts/internal/packaging/official"
	"kubelet-toolchain/scripts/internal/packaging/rpm"
	"kubelet-toolchain/scripts/internal/packaging/scratchroot"
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
	// Nodes are the official nodes upgraded to ours and rolled back.
	Nodes []string
}

// checker holds one check's scratch directory: a copy of each minor's
// repository (tampered copies beside them), the stand-in packages and
// every client root.
type checker struct {
	o       CheckOptions
	scratch string
	n       int
	// el7 stands in for CentOS 7's libraries (glibc 2.17, the floor) and
	// Ubuntu 16.04's; el9 for RHEL 9's (glibc 2.34) and Ubuntu 22.04's,
	// where the packages built before the floor (needing 2.34) installed.
	el7, el9 standin
	// officialYum and officialApt hold the stand-ins of each official
	// node's packages (official.Nodes), by the node's release: the
	// operator's copy of what the node installed from the repositories
	// that are gone, which a rollback installs from.
	officialYum, officialApt map[string]string
}

// standin is what the kubelet packages require and this machine cannot
// install into a scratch root, for one era of distributions: an RPM in a
// yum repository of its own and a .deb.
type standin struct {
	yumRepo, deb string
}

// target is one client run: its root, the distribution stand-in there,
// and the repositories the node is configured with.
type target struct {
	st   standin
	root string
	// repo is a copy of one minor's repository, "" for none.
	repo string
	// official adds the stand-ins of this official node's packages (its
	// release), "" for none.
	official string
	// edit changes the operator's .repo file (dnf only).
	edit func(string) string
}

// Check checks each minor's repository holds that minor only, installs
// every package with dnf and apt into scratch roots and runs the kubelet
// found there, shows each client refusing a tampered package and tampered
// metadata, upgrades nodes that run the official packages (stand-ins of
// them, official.Nodes) to ours and rolls them back, and upgrades from the
// previous package revision (built from the commit that made it) to the
// published one. Nothing outside its scratch directory (under _output) is
// written; the gpg agents the clients start are stopped.
func Check(ctx context.Context, o CheckOptions) (*CheckResult, error) {
	if len(o.Packages) == 0 {
		return nil, fmt.Errorf("no release to check")
	}
	minors, by := ByMinor(o.Packages)
	for _, mi := range minors {
		if _, err := os.Stat(filepath.Join(MinorDir(o.Matrix, mi), RepoFile)); err != nil {
			return nil, fmt.Errorf("no repository %s to check (make repo): %w", mi, err)
		}
	}
	scratch, err := os.MkdirTemp(o.Matrix.OutputDir(), ".repo-check-")
	if err != nil {
		return nil, err
	}
	defer func() {
		stopAgents(scratch)
		fsutil.RemoveAll(scratch)
	}()
	c := &checker{o: o, scratch: scratch}
	if c.el7, err = c.makeStandin(ctx, "centos7", 17, "xenial", "libc6 (= 2.23), iptables (= 1.6.0), mount (= 2.27.1), init-system-helpers (= 1.29ubuntu4)"); err != nil {
		return nil, fmt.Errorf("the stand-in packages: %w", err)
	}
	if c.el9, err = c.makeStandin(ctx, "el9", 34, "jammy", "libc6 (= 2.35), iptables (= 1.8.7), mount (= 2.37.2), init-system-helpers (= 1.62)"); err != nil {
		return nil, fmt.Errorf("the stand-in packages: %w", err)
	}
	if err := c.makeOfficial(ctx); err != nil {
		return nil, fmt.Errorf("the official packages' stand-ins: %w", err)
	}
	res := &CheckResult{}
	good := map[string]string{}
	for _, mi := range minors {
		dir := MinorDir(o.Matrix, mi)
		if err := onlyMinor(dir, mi); err != nil {
			return nil, err
		}
		if good[mi], err = c.copyRepo(dir, mi); err != nil {
			return nil, err
		}
		for _, p := range by[mi] {
			if err := c.installBoth(ctx, good[mi], p); err != nil {
				return nil, err
			}
			res.Installed = append(res.Installed, p.Version)
		}
	}
	last := minors[len(minors)-1]
	refused, err := c.tamper(ctx, MinorDir(o.Matrix, last), by[last][len(by[last])-1])
	res.Refused = refused
	if err != nil {
		return res, err
	}
	for _, n := range official.Nodes {
		pkgs, ok := by[n.Minor()]
		if !ok {
			c.logf("the official %s node: repository %s is not published here (make repo VERSIONS=\"... %s\"): not checked", n.Release, n.Minor(), n.Release)
			continue
		}
		done, err := c.officialNode(ctx, n, good[n.Minor()], newestPatched(pkgs), minors)
		res.Nodes = append(res.Nodes, done...)
		if err != nil {
			return res, err
		}
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
		if err := c.upgrade(ctx, good[Minor(p.Release)], p); err != nil {
			return res, err
		}
		res.Upgraded = append(res.Upgraded, p.Release.PreviousPackageVersion(p.Variant)+" -> "+p.Version)
	}
	return res, nil
}

// onlyMinor checks a minor's repository holds that minor's kubelets and
// no other: a node pointed at it never leaves its minor.
func onlyMinor(dir, minor string) error {
	prefix := strings.TrimPrefix(minor, "v") + "."
	rpms, _ := filepath.Glob(filepath.Join(dir, "yum", "Packages", "*.rpm"))
	debs, _ := filepath.Glob(filepath.Join(dir, "apt", "pool", Component, "k", "kubelet", "*.deb"))
	if len(rpms) == 0 || len(debs) == 0 {
		return fmt.Errorf("repository %s holds %d RPMs and %d .debs", minor, len(rpms), len(debs))
	}
	for _, f := range append(rpms, debs...) {
		name := filepath.Base(f)
		// The dockershim the minor's kubelets run with (1.23.17's in v1.24
		// and v1.25) is not a kubelet: no node upgrades past its API
		// server by installing it.
		if strings.HasPrefix(name, deb.ShimPackage+"-") {
			continue
		}
		if !strings.HasPrefix(name, "kubelet-"+prefix) && !strings.HasPrefix(name, "kubelet_"+prefix) {
			return fmt.Errorf("repository %s holds %s, a kubelet of another minor: a node on %s would upgrade to it, past its API server", minor, name, minor)
		}
	}
	return nil
}

// newestPatched is the package a node upgrades to from a minor's
// repository: the newest release's patched build.
func newestPatched(pkgs []Package) Package {
	best := pkgs[0]
	for _, p := range pkgs {
		if p.Variant == matrix.Patched && (best.Variant != matrix.Patched || semver.Compare("v"+p.Release.Release, "v"+best.Release.Release) > 0) {
			best = p
		}
	}
	return best
}

func (c *checker) logf(format string, args ...any) { fmt.Fprintf(c.o.Log, "    "+format+"\n", args...) }

func (c *checker) dir(name string) string {
	c.n++
	return filepath.Join(c.scratch, fmt.Sprintf("%02d-%s", c.n, name))
}

// newRoot is a scratch root with a shell for the scriptlets and the
// systemd stand-ins (scratchroot).
func (c *checker) newRoot(name string) (string, error) {
	root := c.dir(name)
	return root, scratchroot.Prepare(root)
}

// copyRepo copies a published repository, for one client run or one
// tampering.
func (c *checker) copyRepo(src, name string) (string, error) {
	dst := c.dir("repo-" + name)
	return dst, fsutil.CopyDir(src, dst, true, nil)
}

// installBoth installs p from repo with both clients on a node with no
// kubelet yet, runs the kubelet each put in place, and checks the flags
// an operator puts in the flags file reach its command line.
func (c *checker) installBoth(ctx context.Context, repo string, p Package) error {
	nvr, err := rpm.NVR(p.Release, p.Version)
	if err != nil {
		return err
	}
	want, err := c.released(p)
	if err != nil {
		return err
	}
	for _, cl := range []struct {
		client, flags, what string
		run                 func(t target) (string, error)
	}{
		// The RPM's unit reads /etc/sysconfig/kubelet in every release; the
		// .deb's reads /etc/default/kubelet from 1.11, as kubeadm's drop-in.
		{"dnf", rpm.SysconfigPath, "dnf install " + nvr, func(t target) (string, error) { return c.dnf(ctx, t, "install", nvr) }},
		{"apt", deb.ReadsFlags(p.Release), "apt-get install kubelet=" + p.Version, func(t target) (string, error) { return c.apt(ctx, t, "install", "kubelet="+p.Version) }},
	} {
		root, err := c.newRoot(cl.client + "-" + p.Version)
		if err != nil {
			return err
		}
		out, err := cl.run(target{st: c.el7, root: root, repo: repo})
		if err != nil {
			return fmt.Errorf("%s from repository %s: %w\n%s", cl.what, Minor(p.Release), err, out)
		}
		if err := c.installed(ctx, cl.client, root, p, want); err != nil {
			return fmt.Errorf("%w\n%s", err, out)
		}
		if p.Shim != nil {
			if err := c.installShim(ctx, cl.client, target{st: c.el7, root: root, repo: repo}, p); err != nil {
				return err
			}
		}
		if cl.flags == "" {
			continue
		}
		if err := flagsReach(root, cl.flags); err != nil {
			return fmt.Errorf("%s: %s: %w", p.Version, cl.what, err)
		}
	}
	return nil
}

// installShim installs the dockershim p's kubelet runs with from the same
// repository, beside it, and checks it is the released binary, runs, and
// was neither enabled nor started (the kubelet's drop-in starts it).
func (c *checker) installShim(ctx context.Context, client string, t target, p Package) error {
	s := p.Shim
	var what string
	var out string
	var err error
	if client == "dnf" {
		nvr, nerr := rpm.NVR(s.Release, s.Version)
		if nerr != nil {
			return nerr
		}
		nvr = rpm.ShimName + strings.TrimPrefix(nvr, rpm.Name)
		what = "dnf install " + nvr
		out, err = c.dnf(ctx, t, "install", nvr)
	} else {
		what = "apt-get install " + deb.ShimPackage + "=" + s.Version
		out, err = c.apt(ctx, t, "install", deb.ShimPackage+"="+s.Version)
	}
	if err != nil {
		return fmt.Errorf("%s from repository %s: %w\n%s", what, Minor(p.Release), err, out)
	}
	sums, err := checksums.Load(filepath.Join(c.o.Matrix.Root, checksums.FileName))
	if err != nil {
		return err
	}
	key := s.Release.Release + "/" + string(p.Variant) + "/bin/linux/amd64/" + deb.ShimPackage
	bin := filepath.Join(t.root, "usr", "bin", deb.ShimPackage)
	got, err := checksums.SHA256(bin)
	if err != nil {
		return fmt.Errorf("%s installed no dockershim: %w", what, err)
	}
	if want := sums[key]; got != want {
		return fmt.Errorf("%s installed a dockershim with sha256 %s; CHECKSUMS has %q for %s", what, got, want, key)
	}
	ver, err := execx.Run(ctx, execx.Cmd{Name: bin, Args: []string{"--version"}, Timeout: time.Minute})
	if err != nil {
		return fmt.Errorf("the dockershim %s installed does not run: %w", what, err)
	}
	if st := scratchroot.UnitState(t.root, "dockershim.service"); st != "" {
		return fmt.Errorf("%s left dockershim.service %q: installing it must start nothing", what, st)
	}
	c.logf("%-4s installed dockershim %s beside kubelet %s, starting nothing: sha256 %s, `dockershim --version`: %s", client, s.Version, p.Version, got[:12], strings.TrimSpace(string(ver)))
	return nil
}

// flagsReach sets KUBELET_EXTRA_ARGS in the flags file, as an operator of
// a node without kubeadm does, and checks the unit passes them on.
func flagsReach(root, flags string) error {
	if err := os.MkdirAll(filepath.Dir(filepath.Join(root, flags)), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, flags), []byte("KUBELET_EXTRA_ARGS=--v=4 --node-labels=edited-by=operator\n"), 0o644); err != nil {
		return err
	}
	argv, files, err := execStart(root, "kubelet.service")
	if err != nil {
		return err
	}
	if !slices.Contains(argv, "--v=4") || !slices.Contains(argv, "--node-labels=edited-by=operator") {
		return fmt.Errorf("KUBELET_EXTRA_ARGS in %s does not reach the kubelet: kubelet.service (%s) runs %q", flags, strings.Join(files, ", "), argv)
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
			root, err := c.newRoot("dnf-tampered")
			if err != nil {
				return "", err
			}
			return c.dnf(ctx, target{st: c.el7, root: root, repo: repo, edit: repoEdit}, "install", nvr)
		}
	}
	aptInstall := func(repo string) (string, error) {
		root, err := c.newRoot("apt-tampered")
		if err != nil {
			return "", err
		}
		return c.apt(ctx, target{st: c.el7, root: root, repo: repo}, "install", "kubelet="+p.Version)
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
	edit := "# the operator's edit\nKUBELET_ARGS=\"--v=2\"\n"
	dnf := func(ctx context.Context, root, repo string, args ...string) (string, error) {
		return c.dnf(ctx, target{st: c.el9, root: root, repo: repo}, args...)
	}
	apt := func(ctx context.Context, root, repo string, args ...string) (string, error) {
		return c.apt(ctx, target{st: c.el9, root: root, repo: repo}, args...)
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
		root, err := c.newRoot(cl.client + "-upgrade")
		if err != nil {
			return err
		}
		if _, err := cl.run(ctx, root, repo, cl.install...); err != nil {
			return fmt.Errorf("%s: installing the previous revision %s: %w", cl.client, prev, err)
		}
		if got, err := cl.installed(root); got != cl.from {
			return fmt.Errorf("%s: installing the previous revision gave %q, want %s (%v)", cl.client, got, cl.from, err)
		}
		// The operator's edit of the flags file. A .deb that does not ship
		// it (where the official .deb of the release did not: 1.13's
		// revision 3 on) leaves the operator to write it.
		conf := filepath.Join(root, cl.config)
		old, err := os.ReadFile(conf)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: the previous revision's /%s: %w", cl.client, cl.config, err)
		}
		if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(conf, append(old, edit...), 0o644); err != nil {
			return err
		}
		// Enabled, as the previous packages' description said to.
		if out, err := execx.Run(ctx, execx.Cmd{Name: "systemctl", Args: []string{"--root=" + root, "enable", unit}}); err != nil {
			return fmt.Errorf("%s: systemctl --root enable %s: %w\n%s", cl.client, unit, err, out)
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
		// The flags it set still reach the kubelet: the unit reads
		// KUBELET_ARGS too, for the packages before this layout.
		argv, files, err := execStart(root, unit)
		if err != nil {
			return fmt.Errorf("%s: after the upgrade: %w", cl.client, err)
		}
		if !slices.Contains(argv, "--v=2") {
			return fmt.Errorf("%s: after the upgrade the kubelet runs %q (%s), without the flag the operator set in /%s", cl.client, argv, strings.Join(files, ", "), cl.config)
		}
		link, err := enabledLink(root, unit)
		if err != nil {
			return fmt.Errorf("%s: after the upgrade: %w", cl.client, err)
		}
		c.logf("%-4s upgraded %s -> %s; /%s kept the operator's edit, which reaches the kubelet; enabled (link -> %s); the kubelet is the released one", cl.client, cl.from, cl.to, cl.config, link)
	}
	return nil
}

// dnf runs dnf on t's root with its own configuration: the operator's
// .repo file, pointed at t.repo (and changed by t.edit, if set), the
// official node's stand-ins if t.official, and the distribution
// stand-in's.
func (c *checker) dnf(ctx context.Context, t target, args ...string) (string, error) {
	reposd := t.root + ".repos.d"
	if err := fsutil.RemoveAll(reposd); err != nil {
		return "", err
	}
	if err := os.MkdirAll(reposd, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{"standin.repo": fmt.Sprintf("[standin]\nname=test-only stand-ins of the distribution (not the operator's repository)\nbaseurl=file://%s\ngpgcheck=0\n", t.st.yumRepo)}
	if t.official != "" {
		files["official.repo"] = fmt.Sprintf("[kubernetes]\nname=test-only stand-ins of the official packages (the operator's copy of what the node installed)\nbaseurl=file://%s\ngpgcheck=0\n", c.officialYum[t.official])
	}
	if t.repo != "" {
		text, err := os.ReadFile(filepath.Join(t.repo, RepoFile))
		if err != nil {
			return "", err
		}
		url, err := repoURL(t.repo)
		if err != nil {
			return "", err
		}
		s := strings.ReplaceAll(string(text), url, "file://"+t.repo)
		if t.edit != nil {
			s = t.edit(s)
		}
		files[RepoFile] = s
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(reposd, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	// skip_if_unavailable=True in [main], as Fedora's and Debian's dnf.conf
	// ship it: the operator's .repo file must still make a repository that
	// fails its checks an error, not one dnf skips.
	conf := t.root + ".dnf.conf"
	if err := os.WriteFile(conf, []byte("[main]\nreposdir="+reposd+"\ninstall_weak_deps=False\nskip_if_unavailable=True\n"), 0o644); err != nil {
		return "", err
	}
	defer stopAgents(t.root)
	out, err := execx.Run(ctx, execx.Cmd{Name: "dnf", Args: append([]string{"-y", "--config", conf, "--installroot", t.root, "--releasever", "7", "--setopt=reposdir=" + reposd}, args...), Timeout: 10 * time.Minute})
	return string(out), err
}

// repoURL is the URL a published repository's operator files name (the
// .repo file's baseurl without /yum).
func repoURL(repo string) (string, error) {
	text, err := os.ReadFile(filepath.Join(repo, RepoFile))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^baseurl=(.*)/yum$`).FindSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("%s: no baseurl=<url>/yum line", filepath.Join(repo, RepoFile))
	}
	return string(m[1]), nil
}

// apt runs apt-get on t's root with a configuration of its own
// (APT_CONFIG: nothing of the machine's apt configuration, lists, caches
// or dpkg database): the operator's sources.list line pointed at t.repo
// with its keyring in the root, the official node's stand-ins if
// t.official, and the distribution stand-in .deb installed with the first
// command.
func (c *checker) apt(ctx context.Context, t target, args ...string) (string, error) {
	root := t.root
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
		cfg := fmt.Sprintf("Dir %q;\nDir::State::status %q;\nDPkg::Options { \"--root=%s\"; \"--admindir=%s\"; \"--log=%s\"; };\nDebug::NoLocking \"true\";\nAPT::Sandbox::User \"root\";\n",
			root+"/", filepath.Join(root, "var/lib/dpkg/status"), root, filepath.Join(root, "var/lib/dpkg"), filepath.Join(root, "var/log/dpkg.log"))
		if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
			return "", err
		}
		args = append(append([]string{}, args...), t.st.deb)
	}
	lists := filepath.Join(root, "etc", "apt", "sources.list.d")
	for _, f := range []string{ListFile, "official.list"} {
		os.Remove(filepath.Join(lists, f))
	}
	if t.official != "" {
		line := fmt.Sprintf("deb [trusted=yes] file:%s ./\n", c.officialApt[t.official])
		if err := os.WriteFile(filepath.Join(lists, "official.list"), []byte(line), 0o644); err != nil {
			return "", err
		}
	}
	if t.repo != "" {
		keyring := filepath.Join(root, strings.TrimPrefix(Keyring, "/"))
		os.Remove(keyring)
		if err := fsutil.CopyFile(filepath.Join(t.repo, KeyGPG), keyring); err != nil {
			return "", err
		}
		line, err := os.ReadFile(filepath.Join(t.repo, ListFile))
		if err != nil {
			return "", err
		}
		url, err := repoURL(t.repo)
		if err != nil {
			return "", err
		}
		l := strings.ReplaceAll(strings.ReplaceAll(string(line), url, "file:"+t.repo), Keyring, keyring)
		if err := os.WriteFile(filepath.Join(lists, ListFile), []byte(l), 0o644); err != nil {
			return "", err
		}
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
	// The tools the official packages required, and the shell their
	// scriptlets run in (scratchroot lays the files down).
	provides := []string{"rtld(GNU_HASH)", "/bin/sh", "socat", "ethtool", "iproute", "ebtables", "conntrack"}
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
Provides: %s, iproute2, socat, util-linux, ebtables, ethtool, conntrack
Description: test-only stand-in for libc6, iptables and mount (%s)
 Provides the names the kubelet packages depend on, for make check-repo's
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
