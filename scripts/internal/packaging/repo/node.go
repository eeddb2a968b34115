package repo

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/packaging/official"
	"kubelet-toolchain/scripts/internal/packaging/rpm"
	"kubelet-toolchain/scripts/internal/packaging/scratchroot"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/tools/execx"
)

// The nodes our packages are for run the official packages, installed
// before their repositories went away. officialNode stands one up in a
// scratch root per client, as kubeadm left it (the official kubelet,
// kubeadm, kubectl, kubernetes-cni and cri-tools, stand-ins built from
// their recorded layouts; the kubelet enabled and running; kubeadm's
// flags; an operator's edit), upgrades it to ours from the minor's
// repository, as an operator would with every minor published, and rolls
// it back to the official package. After each step: the kubelet of the
// wanted package in place, the other packages kept, kubeadm's drop-in,
// kubeadm's flags and the operator's edits unchanged, the kubelet's
// command line (unit, drop-ins and flags files as systemd reads them)
// unchanged, the enable link naming a unit that is there, and the kubelet
// left as the distribution's packages leave it (the RPMs start and stop
// nothing; on Debian the old package's prerm stops it and the new one's
// postinst starts it).

// unit is the kubelet's systemd unit.
const unit = "kubelet.service"

// operatorEdit is the flag an operator added.
const operatorEdit = "--node-labels=edited-by=operator"

// makeOfficial builds the stand-ins of every official.Nodes package, each
// node's RPMs in a yum repository and .debs in a flat apt repository of
// its own (the operator's copy of what that node installed: the official
// repositories held every minor, as ours no longer do).
func (c *checker) makeOfficial(ctx context.Context) error {
	c.officialYum, c.officialApt = map[string]string{}, map[string]string{}
	for _, n := range official.Nodes {
		top := filepath.Join(c.scratch, "official-"+n.Release)
		yum, apt := filepath.Join(top, "yum"), filepath.Join(top, "apt")
		for _, d := range []string{yum, apt} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		for _, p := range n.RPM {
			if err := officialRPM(ctx, top, yum, n, p); err != nil {
				return fmt.Errorf("official %s %s-%s RPM: %w", n.Release, p.Name, p.Version, err)
			}
		}
		for _, p := range n.Deb {
			if err := officialDeb(ctx, top, apt, n, p); err != nil {
				return fmt.Errorf("official %s %s_%s .deb: %w", n.Release, p.Name, p.Version, err)
			}
		}
		if _, err := execx.Run(ctx, execx.Cmd{Name: "createrepo_c", Args: []string{"--quiet", yum}}); err != nil {
			return err
		}
		var packages strings.Builder
		if _, err := execx.Run(ctx, execx.Cmd{Name: "apt-ftparchive", Args: []string{"packages", "."}, Dir: apt, Stdout: &packages}); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(apt, "Packages"), []byte(packages.String()), 0o644); err != nil {
			return err
		}
		c.officialYum[n.Release], c.officialApt[n.Release] = yum, apt
	}
	return nil
}

// officialRPM builds one stand-in RPM: the recorded files, directories and
// Requires, no scriptlets (the official RPMs had none), nothing automatic.
func officialRPM(ctx context.Context, top, yum string, n official.Node, p official.Package) error {
	version, release, _ := strings.Cut(p.Version, "-")
	build := filepath.Join(top, "rpmbuild-"+p.Name+"-"+p.Version)
	src := filepath.Join(build, "SOURCES")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	var spec strings.Builder
	fmt.Fprintf(&spec, "Name: %s\nVersion: %s\nRelease: %s\nSummary: Test-only stand-in of the official %s-%s RPM\nLicense: Apache-2.0\nAutoReqProv: no\n", p.Name, version, release, p.Name, p.Version)
	for _, r := range p.Requires {
		fmt.Fprintf(&spec, "Requires: %s\n", r)
	}
	fmt.Fprintf(&spec, "%%description\nBuilt by make check-repo from the layout kubernetes/release recorded for %s.\n%%install\n", n.Release)
	files := "%files\n"
	for i, f := range p.Files {
		data, err := n.Content(f)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("file%d", i)
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&spec, "install -D -m %04o %%{_sourcedir}/%s %%{buildroot}%s\n", f.Mode, name, f.Path)
		if f.Config {
			files += "%config(noreplace) "
		}
		files += f.Path + "\n"
	}
	for _, d := range p.Dirs {
		fmt.Fprintf(&spec, "install -d -m 0755 %%{buildroot}%s\n", d)
		files += d + "/\n"
	}
	spec.WriteString(files)
	specFile := filepath.Join(build, p.Name+".spec")
	if err := os.WriteFile(specFile, []byte(spec.String()), 0o644); err != nil {
		return err
	}
	if _, err := execx.Run(ctx, execx.Cmd{Name: "rpmbuild", Args: []string{"-bb", "--target", "x86_64", "--define", "_topdir " + build, specFile}, Env: []string{"HOME=" + build}}); err != nil {
		return err
	}
	built, err := filepath.Glob(filepath.Join(build, "RPMS", "x86_64", "*.rpm"))
	if err != nil || len(built) != 1 {
		return fmt.Errorf("rpmbuild made %v", built)
	}
	return os.Rename(built[0], filepath.Join(yum, filepath.Base(built[0])))
}

// officialDeb builds one stand-in .deb: the recorded files (those under
// /etc conffiles, as dh_installdeb made them), Depends and maintainer
// scripts.
func officialDeb(ctx context.Context, top, apt string, n official.Node, p official.Package) error {
	stage := filepath.Join(top, "deb-"+p.Name+"-"+p.Version)
	if err := os.MkdirAll(filepath.Join(stage, "DEBIAN"), 0o755); err != nil {
		return err
	}
	var conffiles strings.Builder
	for _, f := range p.Files {
		data, err := n.Content(f)
		if err != nil {
			return err
		}
		dst := filepath.Join(stage, f.Path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, os.FileMode(f.Mode)); err != nil {
			return err
		}
		if strings.HasPrefix(f.Path, "/etc/") {
			conffiles.WriteString(f.Path + "\n")
		}
	}
	control := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: Kubernetes Authors <kubernetes-dev+release@googlegroups.com>\n", p.Name, p.Version)
	if len(p.Requires) > 0 {
		control += "Depends: " + strings.Join(p.Requires, ", ") + "\n"
	}
	control += fmt.Sprintf("Description: test-only stand-in of the official %s %s .deb\n built by make check-repo from the layout kubernetes/release recorded.\n", p.Name, p.Version)
	meta := map[string][]byte{"control": []byte(control)}
	if conffiles.Len() > 0 {
		meta["conffiles"] = []byte(conffiles.String())
	}
	for name, layout := range p.Scripts {
		data, err := n.Layout(layout)
		if err != nil {
			return err
		}
		meta[name] = data
	}
	for name, data := range meta {
		mode := os.FileMode(0o755)
		if name == "control" || name == "conffiles" {
			mode = 0o644
		}
		if err := os.WriteFile(filepath.Join(stage, "DEBIAN", name), data, mode); err != nil {
			return err
		}
	}
	out := filepath.Join(apt, fmt.Sprintf("%s_%s_amd64.deb", p.Name, p.Version))
	_, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-deb", Args: []string{"--root-owner-group", "--build", stage, out}})
	return err
}

// nodeClient is how one client installs, upgrades and rolls back, and
// where the node's files are on its distribution.
type nodeClient struct {
	name string
	pkgs []official.Package
	// dropIn is kubeadm's drop-in, flags the flags file it reads ("" for
	// none).
	dropIn, flags      string
	installed          func(root, name string) (string, error)
	install, upgrade   func(t target) (string, error)
	rollback           func(t target, kubelet official.Package) (string, error)
	ours               string
	stopsAndStarts     bool
	enableAfterInstall bool
}

// officialNode checks n's upgrade to p, the newest patched package of
// n's minor, from repo (a copy of that minor's repository) and back, with
// both clients; published are the minors make repo published.
func (c *checker) officialNode(ctx context.Context, n official.Node, repo string, p Package, published []string) ([]string, error) {
	want, err := c.released(p)
	if err != nil {
		return nil, err
	}
	nvr, err := rpm.NVR(p.Release, p.Version)
	if err != nil {
		return nil, err
	}
	rpmQuery := func(root, name string) (string, error) {
		out, err := execx.Run(ctx, execx.Cmd{Name: "rpm", Args: []string{"--root", root, "-q", "--qf", "%{VERSION}-%{RELEASE}", name}})
		return strings.TrimSpace(string(out)), err
	}
	dpkgQuery := func(root, name string) (string, error) {
		out, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-query", Args: []string{"--admindir", filepath.Join(root, "var", "lib", "dpkg"), "-W", "-f", "${Version}", name}})
		return strings.TrimSpace(string(out)), err
	}
	var specs = func(pkgs []official.Package, f func(official.Package) string) []string {
		var out []string
		for _, p := range pkgs {
			out = append(out, f(p))
		}
		return out
	}
	rpmSpec := func(p official.Package) string { return p.Name + "-" + p.Version }
	debSpec := func(p official.Package) string { return p.Name + "=" + p.Version }
	clients := []nodeClient{
		{name: "dnf", pkgs: n.RPM, dropIn: n.RPMDropIn, flags: n.RPMFlags, installed: rpmQuery,
			install: func(t target) (string, error) {
				return c.dnf(ctx, t, append([]string{"install"}, specs(n.RPM, rpmSpec)...)...)
			},
			upgrade: func(t target) (string, error) { return c.dnf(ctx, t, "upgrade", "kubelet") },
			rollback: func(t target, k official.Package) (string, error) {
				return c.dnf(ctx, t, "downgrade", rpmSpec(k))
			},
			ours: strings.TrimPrefix(nvr, "kubelet-"), enableAfterInstall: true},
		{name: "apt", pkgs: n.Deb, dropIn: n.DebDropIn, flags: n.DebFlags, installed: dpkgQuery,
			install: func(t target) (string, error) {
				return c.apt(ctx, t, append([]string{"install"}, specs(n.Deb, debSpec)...)...)
			},
			// apt-get install of an installed package takes the candidate:
			// the newest version the configured repositories hold.
			upgrade: func(t target) (string, error) { return c.apt(ctx, t, "install", "kubelet") },
			rollback: func(t target, k official.Package) (string, error) {
				return c.apt(ctx, t, "install", "--allow-downgrades", debSpec(k))
			},
			ours: p.Version, stopsAndStarts: true},
	}
	var done []string
	for _, cl := range clients {
		if err := c.nodeWith(ctx, n, cl, repo, p, want, published); err != nil {
			return done, fmt.Errorf("the official %s node (%s): %w", n.Release, cl.name, err)
		}
		done = append(done, fmt.Sprintf("%s %s", cl.name, n.Release))
	}
	return done, nil
}

// nodeWith is officialNode with one client.
func (c *checker) nodeWith(ctx context.Context, n official.Node, cl nodeClient, repo string, p Package, want string, published []string) error {
	root, err := c.newRoot(cl.name + "-official-" + n.Release)
	if err != nil {
		return err
	}
	var kubelet official.Package
	versions := map[string]string{}
	for _, op := range cl.pkgs {
		versions[op.Name] = op.Version
		if op.Name == "kubelet" {
			kubelet = op
		}
	}
	out, err := cl.install(target{st: c.el7, root: root, official: n.Release})
	if err != nil {
		return fmt.Errorf("installing the official packages: %w\n%s", err, out)
	}
	if cl.enableAfterInstall {
		// kubeadm's instructions: systemctl enable kubelet (the RPM does
		// not enable it), with this machine's own systemctl.
		if out, err := execx.Run(ctx, execx.Cmd{Name: "systemctl", Args: []string{"--root=" + root, "enable", unit}}); err != nil {
			return fmt.Errorf("systemctl --root enable %s: %w\n%s", unit, err, out)
		}
		if err := scratchroot.SetUnitState(root, unit, "active"); err != nil {
			return err
		}
	}
	if err := leaveAsKubeadm(root, n, cl); err != nil {
		return err
	}
	before, err := snapshot(root, n, cl)
	if err != nil {
		return err
	}
	argv, _, err := execStart(root, unit)
	if err != nil {
		return err
	}
	if !slices.Contains(argv, operatorEdit) {
		return fmt.Errorf("the official node's kubelet runs %q, without the operator's %s: the stand-in is not as kubeadm left it", argv, operatorEdit)
	}
	officialSum, err := checksums.SHA256(filepath.Join(root, "usr", "bin", "kubelet"))
	if err != nil {
		return err
	}
	steps := []struct {
		what, version, sum string
		run                func() (string, error)
	}{
		{fmt.Sprintf("upgraded from the official %s to %s from repository %s (published: %s)", kubelet.Version, cl.ours, Minor(p.Release), strings.Join(published, ", ")),
			cl.ours, want, func() (string, error) {
				return cl.upgrade(target{st: c.el7, root: root, repo: repo, official: n.Release})
			}},
		{fmt.Sprintf("rolled back to the official %s", kubelet.Version), kubelet.Version, officialSum,
			func() (string, error) {
				return cl.rollback(target{st: c.el7, root: root, repo: repo, official: n.Release}, kubelet)
			}},
	}
	for _, s := range steps {
		calls, _ := scratchroot.Calls(root)
		out, err := s.run()
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", s.what, err, out)
		}
		later, _ := scratchroot.Calls(root)
		how, err := c.nodeAfter(ctx, root, n, cl, s.version, s.sum, versions, before, argv, later[len(calls):])
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", s.what, err, out)
		}
		c.logf("%-4s the official %s node %s: %s", cl.name, n.Release, s.what, how)
	}
	return nil
}

// leaveAsKubeadm writes what `kubeadm join` and the operator left: the
// kubeadm flags (1.11 on) and the operator's flag, in the flags file the
// drop-in reads or, before 1.11, in a drop-in of the operator's own, as
// the docs of the day had it. On the 1.9 .deb node the flags file (a
// conffile nothing reads) gets the edit too.
func leaveAsKubeadm(root string, n official.Node, cl nodeClient) error {
	write := func(p, data string, appendTo bool) error {
		f := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return err
		}
		if appendTo {
			old, _ := os.ReadFile(f)
			data = string(old) + data
		}
		return os.WriteFile(f, []byte(data), 0o644)
	}
	if n.KubeadmFlags != "" {
		if err := write("/var/lib/kubelet/kubeadm-flags.env", n.KubeadmFlags, false); err != nil {
			return err
		}
	}
	edit := "KUBELET_EXTRA_ARGS=" + operatorEdit + "\n"
	if cl.flags != "" {
		return write(cl.flags, edit, true)
	}
	if err := write("/etc/systemd/system/kubelet.service.d/20-operator.conf", "[Service]\nEnvironment=\"KUBELET_EXTRA_ARGS="+operatorEdit+"\"\n", false); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "etc/default/kubelet")); err == nil {
		return write("/etc/default/kubelet", "# the operator's note\n"+edit, true)
	}
	return nil
}

// snapshot is the sha256 of every file the packages must leave alone:
// kubeadm's drop-in, kubeadm's flags, the operator's drop-in and flags.
func snapshot(root string, n official.Node, cl nodeClient) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range []string{cl.dropIn, "/var/lib/kubelet/kubeadm-flags.env", "/etc/systemd/system/kubelet.service.d/20-operator.conf", "/etc/default/kubelet", "/etc/sysconfig/kubelet"} {
		sum, err := checksums.SHA256(filepath.Join(root, p))
		if os.IsNotExist(err) && p != cl.dropIn {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[p] = sum
	}
	return out, nil
}

// nodeAfter checks root after a step and says what happened.
func (c *checker) nodeAfter(ctx context.Context, root string, n official.Node, cl nodeClient, version, sum string, versions, before map[string]string, argv, calls []string) (string, error) {
	got, err := cl.installed(root, "kubelet")
	if err != nil || got != version {
		return "", fmt.Errorf("kubelet %q is installed (%v), want %s: a node must get the newest kubelet of its own minor's repository and no other", got, err, version)
	}
	if s, err := checksums.SHA256(filepath.Join(root, "usr", "bin", "kubelet")); err != nil || s != sum {
		return "", fmt.Errorf("/usr/bin/kubelet has sha256 %s (%v), want %s", s, err, sum)
	}
	for _, name := range slices.Sorted(maps.Keys(versions)) {
		if name == "kubelet" {
			continue
		}
		if got, err := cl.installed(root, name); err != nil || got != versions[name] {
			return "", fmt.Errorf("%s is %q now (%v), want the official %s kept", name, got, err, versions[name])
		}
	}
	now, err := snapshot(root, n, cl)
	if err != nil {
		return "", err
	}
	for p, s := range before {
		if now[p] != s {
			data, _ := os.ReadFile(filepath.Join(root, p))
			return "", fmt.Errorf("%s changed (sha256 %s, was %s): kubeadm's and the operator's files must be kept:\n%s", p, now[p], s, data)
		}
	}
	after, files, err := execStart(root, unit)
	if err != nil {
		return "", err
	}
	if !slices.Equal(after, argv) {
		return "", fmt.Errorf("the kubelet's command line changed: %q, was %q (from %s)", after, argv, strings.Join(files, ", "))
	}
	target, err := enabledLink(root, unit)
	if err != nil {
		return "", err
	}
	if out, err := execx.Run(ctx, execx.Cmd{Name: "systemctl", Args: []string{"--root=" + root, "is-enabled", unit}, Timeout: time.Minute}); err != nil {
		return "", fmt.Errorf("systemctl --root is-enabled %s: %q: %w", unit, strings.TrimSpace(string(out)), err)
	}
	state := scratchroot.UnitState(root, unit)
	var lifecycle []string
	for _, l := range calls {
		for _, verb := range []string{" start ", " stop ", " restart "} {
			if strings.Contains(l+" ", verb) {
				lifecycle = append(lifecycle, l)
			}
		}
	}
	switch {
	case state != "active":
		return "", fmt.Errorf("the kubelet is %q after the step (the scripts' calls: %q): it must run again", state, calls)
	case !cl.stopsAndStarts && len(lifecycle) > 0:
		return "", fmt.Errorf("a scriptlet started or stopped the kubelet (%q): the RPMs restart nothing", lifecycle)
	case cl.stopsAndStarts && (len(lifecycle) < 2 || !strings.Contains(lifecycle[0], "prerm") || !strings.Contains(lifecycle[len(lifecycle)-1], "postinst")):
		return "", fmt.Errorf("the kubelet's stop and start were %q, want the old package's prerm stopping it and the new one's postinst starting it", lifecycle)
	}
	how := fmt.Sprintf("kubelet %s (sha256 %.12s), %d other packages and %d files of kubeadm and the operator kept, the same command line (%d arguments), enabled (link -> %s)",
		version, sum, len(versions)-1, len(before), len(argv), target)
	if cl.stopsAndStarts {
		how += fmt.Sprintf(", stopped by the old package's prerm and started by the new one's postinst (%d calls)", len(lifecycle))
	} else {
		how += ", running, not restarted"
	}
	return how, nil
}
