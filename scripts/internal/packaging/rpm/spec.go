// Package rpm makes the kubelet's RPM packages the way an RPM-based
// distribution builds them: a spec whose Source0 is the restored upstream
// tree and whose patches are the applied series one by one (PatchN, in
// application order, %autosetup -p1), the source RPM rpmbuild -bs makes of
// it, and the binary RPM rpmbuild --rebuild makes of that SRPM. rpmbuild
// runs with its own _topdir and HOME, SOURCE_DATE_EPOCH and the
// reproducible-build macros, so the same inputs give the same bytes, and
// with no stripping or other post-processing, so the kubelet in the RPM is
// the released binary.
package rpm

import (
	"fmt"
	"regexp"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/official"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
)

// Name is the RPM package name, the one upstream's own packages used.
const Name = "kubelet"

// SpecName is the spec's name inside the SRPM (rpmbuild's convention).
const SpecName = Name + ".spec"

// Installed paths.
const (
	BinPath       = "/usr/bin/kubelet"
	SysconfigPath = "/etc/sysconfig/kubelet"
	ManifestsDir  = "/etc/kubernetes/manifests"
)

// UnitPath is where r's RPM puts the unit: where the official kubelet RPM
// of the release had it (/etc/systemd/system before 2019-03), so the link
// `systemctl enable` made on the node keeps naming it.
func UnitPath(r *matrix.Release) string {
	return official.RPMUnitDir(r.BuildDate) + "/kubelet.service"
}

// ShipsFlags says whether r's RPM ships /etc/sysconfig/kubelet: where the
// official RPM of the release did (1.11 on), with its bytes. Before, the
// file is an operator's (or an earlier package's, kept), which the unit
// reads all the same: no file of the era sets KUBELET_EXTRA_ARGS there.
func ShipsFlags(r *matrix.Release) bool { return official.RPMShipsFlags(r.Version().Minor) }

// restoreFlags puts back the operator's flags file that rpm saved as
// .rpmsave, when the package taking over has it as a plain file or not at
// all (the official RPMs before 2019-01, ours before 1.11): only when no
// file is in place or the save is newer than it, so nothing older comes
// back.
const restoreFlags = `f=/etc/sysconfig/kubelet
if [ -f "$f.rpmsave" ] && { [ ! -e "$f" ] || [ "$f.rpmsave" -nt "$f" ]; }; then
	mv -f "$f.rpmsave" "$f"
fi
`

// relink is the scriptlet that keeps the enable link working when the
// unit moves between /etc/systemd/system and /usr/lib/systemd/system (a
// release of the other era replaced this one, or this one an official
// package of the other era): a link naming a unit that is gone is pointed
// at the one installed.
const relink = `link=/etc/systemd/system/multi-user.target.wants/kubelet.service
if [ -L "$link" ] && [ ! -e "$link" ]; then
	for unit in /etc/systemd/system/kubelet.service /usr/lib/systemd/system/kubelet.service; do
		if [ -f "$unit" ]; then
			ln -sf "$unit" "$link"
			break
		fi
	done
fi
`

// Sources other than Source0 and the patches, as named in SOURCES.
const (
	unitSource          = "kubelet.service"
	sysconfigSource     = "kubelet.sysconfig"
	shimUnitSource      = "dockershim.service"
	shimSysconfigSource = "dockershim.sysconfig"
)

// The shim's subpackage (a release that serves its dockershim on its own):
// its name and installed paths; the unit reads the flags file toolchain
// switch-node writes.
const (
	ShimName          = "dockershim"
	ShimBinPath       = "/usr/bin/dockershim"
	ShimUnitPath      = "/usr/lib/systemd/system/dockershim.service"
	ShimSysconfigPath = "/etc/sysconfig/dockershim"
)

// Version is the RPM Version of a package version <upstream>+<series>:
// the upstream release, so the package compares as that release.
func Version(r *matrix.Release) string { return r.Release }

// Release maps the package version's build part to an RPM Release:
// 1.9.11+k19-fixes -> 1.k19_fixes. The leading 1 makes it sort above
// upstream's own 1.9.11-0 (and any -0.x) and it stays below every
// 1.9.12-*, which the Version decides; '-' is not allowed in a Release,
// so the series' dashes become underscores.
func Release(r *matrix.Release, version string) (string, error) {
	build, ok := strings.CutPrefix(version, r.Release+"+")
	if !ok || build == "" {
		return "", fmt.Errorf("package version %q is not %s+<build>", version, r.Release)
	}
	rel := "1." + strings.ReplaceAll(build, "-", "_")
	if !releaseRE.MatchString(rel) {
		return "", fmt.Errorf("RPM Release %q (from %s) has characters RPM does not allow", rel, version)
	}
	return rel, nil
}

var releaseRE = regexp.MustCompile(`^[A-Za-z0-9._+~^]+$`)

// NVR is the name-version-release rpm -q prints for the package.
func NVR(r *matrix.Release, version string) (string, error) {
	rel, err := Release(r, version)
	if err != nil {
		return "", err
	}
	return Name + "-" + Version(r) + "-" + rel, nil
}

// SRPMFileName and RPMFileName are the artifact names, named after the
// package version like the other artifacts (rpmbuild's own names are
// N-V-R.arch.rpm; rpm -qp shows those).
func SRPMFileName(version string) string    { return Name + "-" + version + ".src.rpm" }
func RPMFileName(version string) string     { return Name + "-" + version + ".x86_64.rpm" }
func ShimRPMFileName(version string) string { return ShimName + "-" + version + ".x86_64.rpm" }

// SpecFileName is the spec as released next to the SRPM: named after the
// package version, since every variant of a release shares a dist dir.
func SpecFileName(version string) string { return Name + "-" + version + ".spec" }

// PatchFileName is a quilt patch's file name in SOURCES: SRPMs hold their
// sources flat, so <series>/NNNN-x.patch becomes <series>-NNNN-x.patch.
func PatchFileName(p quilt.Patch) string { return strings.ReplaceAll(p.Name, "/", "-") }

// SpecInput is what the spec says.
type SpecInput struct {
	Release *matrix.Release
	Variant matrix.Variant
	// Version is the package version, e.g. 1.9.11+k19-fixes.
	Version string
	// SHA256 is the released kubelet's.
	SHA256 string
	// Source0 is the restored tree's tarball name; TopDir its top directory.
	Source0, TopDir string
	// Patches are the applied series in order (quilt.Export).
	Patches []quilt.Patch
	// BuildCommand is build.sh's one line: run from the top of a GOPATH
	// that holds the tree at src/k8s.io/kubernetes, it writes ./kubelet.
	BuildCommand string
	// CToolchain is the C toolchain's tarball name (Source3) for a cgo
	// release: the line builds cgo with it, from $CTOOLCHAIN.
	CToolchain string
	// ShimSHA256 is the released dockershim's, for a release that serves
	// it on its own: the spec then builds the dockershim subpackage too.
	ShimSHA256 string
}

// Spec renders kubelet.spec.
func Spec(in SpecInput) ([]byte, error) {
	r, v := in.Release, in.Variant
	rel, err := Release(r, in.Version)
	if err != nil {
		return nil, err
	}
	pin := "GOTOOLCHAIN=" + r.Go + " "
	if !strings.Contains(in.BuildCommand, pin) {
		return nil, fmt.Errorf("the build command does not pin %s:\n%s", strings.TrimSpace(pin), in.BuildCommand)
	}
	buildLine := strings.ReplaceAll(esc(in.BuildCommand), pin, "GOTOOLCHAIN=%{gotoolchain} ")
	series := r.Series.For(v)
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	head := []string{
		fmt.Sprintf("kubelet %s: the kubelet of Kubernetes %s with the series %s, written by the patched kubelet build toolchain (make package). The same spec is in %s; rebuild it with", in.Version, r.ModuleVersion(), strings.Join(series, ", "), SRPMFileName(in.Version)),
		"  rpmbuild --rebuild " + SRPMFileName(in.Version),
		"",
		fmt.Sprintf("Source0 is not a git archive: it is the k8s.io/kubernetes module zip %s (%s) as extracted, with vendor/ restored from the toolchain's lock (module zips carry no vendor/), so the build fetches no source. The patches are the series in application order: git format-patch files as they are, overlay files as added-file patches.", r.ModuleVersion(), r.ModuleSum),
		"",
		fmt.Sprintf("The Go toolchain is pinned (gotoolchain below, used as GOTOOLCHAIN): with %s the kubelet's sha256 is the released binary's,", r.Go),
		"  " + in.SHA256,
		fmt.Sprintf("and any other Go >= 1.21 fetches %s through the module proxy first. Offline with another Go: rpmbuild --define 'gotoolchain local' (a kubelet with another sha256).", r.Go),
	}
	if r.CGO {
		head = append(head, "", fmt.Sprintf("cgo is on, as in the release's official build: C is compiled and linked by the pinned C toolchain in Source3 (%s, checked against its pinned sha512 before it is unpacked), zig targeting %s, so the kubelet needs no glibc symbol version newer than %s (CentOS/RHEL 7) on any build machine, and rpm's Requires say so. Built with the machine's own gcc instead, the kubelet would need that machine's glibc and have another sha256.", r.CToolchain.NPM, r.CToolchain.Target(), r.CToolchain.GlibcFloor))
	}
	for _, h := range head {
		if h == "" || strings.HasPrefix(h, "  ") {
			w("#%s\n", strings.TrimRight(" "+h, " "))
			continue
		}
		for _, l := range strings.Split(strings.TrimSuffix(wrap(h), "\n"), "\n") {
			w("# %s\n", l)
		}
	}
	w("\n")
	w("# rpmbuild must not touch the binary (no strip, no debuginfo, no build-id\n")
	w("# links): its sha256 is the released one.\n")
	w("%%global debug_package %%{nil}\n")
	w("%%global __os_install_post %%{nil}\n")
	w("%%global _build_id_links none\n")
	w("%%{!?gotoolchain:%%global gotoolchain %s}\n", r.Go)
	w("%%{!?_unitdir:%%global _unitdir /usr/lib/systemd/system}\n")
	w("\n")
	field := func(k, val string) { w("%-16s%s\n", k+":", val) }
	field("Name", Name)
	field("Version", Version(r))
	field("Release", rel+"%{?dist}")
	field("Summary", esc(fmt.Sprintf("Kubernetes node agent %s (%s)", r.ModuleVersion(), v)))
	// The kubelet's own licence; the vendored modules' are in vendor/ and
	// the SPDX document lists them.
	field("License", "Apache-2.0")
	field("URL", "https://github.com/kubernetes/kubernetes")
	field("Source0", in.Source0)
	field("Source1", unitSource)
	if ShipsFlags(r) {
		field("Source2", sysconfigSource)
	}
	if in.CToolchain != "" {
		field("Source3", in.CToolchain)
	}
	if in.ShimSHA256 != "" {
		field("Source4", shimUnitSource)
		field("Source5", shimSysconfigSource)
	}
	last := ""
	for i, p := range in.Patches {
		if p.Series != last {
			w("# %s\n", p.Series)
			last = p.Series
		}
		field(fmt.Sprintf("Patch%d", i+1), PatchFileName(p))
	}
	field("ExclusiveArch", "x86_64")
	field("BuildRequires", "golang >= 1.21")
	// iptables: kubelet programs the KUBE-* chains; util-linux: mount. The
	// official package required these and more; a node that had it has them.
	field("Requires", "iptables")
	field("Requires", "util-linux")
	// CentOS 7 extras' kubernetes-node shipped /usr/bin/kubelet too.
	field("Conflicts", "kubernetes-node")
	w("\n%%description\n")
	what := "upstream with no patch series"
	if len(series) > 0 {
		what = "with the patch series " + strings.Join(series, ", ") + " applied"
	}
	w("%s", esc(wrap(fmt.Sprintf("The kubelet of Kubernetes %s, built reproducibly from the pinned upstream release %s (kubelet --version: Kubernetes %s). It takes the place of the official kubelet package of its release: the unit where that package had it (%s), flags in %s (KUBELET_EXTRA_ARGS, which kubeadm's drop-in reads too); installing it restarts nothing.",
		r.ModuleVersion(), what, r.GitVersion(v), UnitPath(r), SysconfigPath))))
	if in.ShimSHA256 != "" {
		w("\n%%package -n %s\n", ShimName)
		field("Summary", esc(fmt.Sprintf("dockershim of Kubernetes %s (%s), served on its own", r.ModuleVersion(), v)))
		// dockershim's hostport and kubenet rules.
		field("Requires", "iptables")
		w("\n%%description -n %s\n", ShimName)
		w("%s", esc(wrap(fmt.Sprintf("The dockershim the kubelet of Kubernetes %s served inside itself, built from the same tree (dockershim --version: Kubernetes %s, sha256 %s) and served on its own, so the kubelets of 1.24 and 1.25 run on the Docker Engine with the containers, sandboxes and checkpoints 1.23 made. Installing it starts nothing: toolchain switch-node writes its flags (%s) and the kubelet drop-in that starts it with the kubelet.",
			r.ModuleVersion(), r.GitVersion(v), in.ShimSHA256, ShimSysconfigPath))))
	}
	w("\n%%prep\n")
	w("%%autosetup -p1 -n %s\n", in.TopDir)
	if in.CToolchain != "" {
		w("# The C toolchain, checked against the sha512 versions.yaml pins.\n")
		w("echo \"%s  %%{SOURCE3}\" | sha512sum -c --quiet\n", r.CToolchain.SHA512Hex())
		w("rm -rf %%{_builddir}/ctoolchain && mkdir %%{_builddir}/ctoolchain\n")
		w("tar -xzf %%{SOURCE3} -C %%{_builddir}/ctoolchain --strip-components=1\n")
	}
	w("\n%%build\n")
	w("# build.sh's line, run from the top of a GOPATH whose src/k8s.io/kubernetes\n")
	w("# is this tree (a link: -trimpath keeps every path out of the binary).\n")
	w("mkdir -p %%{_builddir}/gopath/src/k8s.io\n")
	w("ln -sfn \"$PWD\" %%{_builddir}/gopath/src/k8s.io/kubernetes\n")
	w("cd %%{_builddir}/gopath\n")
	if in.CToolchain != "" {
		w("CTOOLCHAIN=%%{_builddir}/ctoolchain\n")
	}
	w("%s\n", buildLine)
	w("\n%%install\n")
	w("install -D -p -m 0755 %%{_builddir}/gopath/kubelet %%{buildroot}%%{_bindir}/kubelet\n")
	w("install -D -p -m 0644 %%{SOURCE1} %%{buildroot}%s\n", UnitPath(r))
	if ShipsFlags(r) {
		w("install -D -p -m 0644 %%{SOURCE2} %%{buildroot}%%{_sysconfdir}/sysconfig/kubelet\n")
	}
	w("install -d -m 0755 %%{buildroot}%s\n", ManifestsDir)
	if in.ShimSHA256 != "" {
		w("install -D -p -m 0755 %%{_builddir}/gopath/dockershim %%{buildroot}%s\n", ShimBinPath)
		w("install -D -p -m 0644 %%{SOURCE4} %%{buildroot}%s\n", ShimUnitPath)
		w("install -D -p -m 0644 %%{SOURCE5} %%{buildroot}%s\n", ShimSysconfigPath)
	}
	w("\n# No restart: as the official RPM, installing this package only puts the\n")
	w("# kubelet in place (docs/packaging.md says when to restart it).\n")
	w("%%posttrans\n%s%s", relink, restoreFlags)
	w("\n%%postun\n")
	w("# Replaced by another version (a rollback, or a release of the other era).\n")
	w("if [ \"$1\" -ge 1 ]; then\n%s%s", indentTab(relink), indentTab(restoreFlags))
	w("fi\n")
	w("\n%%files\n")
	w("%%defattr(-,root,root,-)\n")
	w("%%license LICENSE\n")
	w("%%{_bindir}/kubelet\n")
	w("%s\n", UnitPath(r))
	w("%%dir %s\n", ManifestsDir)
	if ShipsFlags(r) {
		w("%%config(noreplace) %%{_sysconfdir}/sysconfig/kubelet\n")
	}
	if in.ShimSHA256 != "" {
		w("\n# No scriptlets: as the kubelet's, installing the shim starts nothing.\n")
		w("%%files -n %s\n", ShimName)
		w("%%defattr(-,root,root,-)\n")
		w("%%license LICENSE\n")
		w("%s\n%s\n", ShimBinPath, ShimUnitPath)
		w("%%config(noreplace) %s\n", ShimSysconfigPath)
	}
	w("\n%%changelog\n")
	w("%s", esc(Changelog(r, v, in.Version, rel, in.Patches)))
	return []byte(b.String()), nil
}

// Changelog is the spec's %changelog: an entry dated at the release's
// build date saying what the package is built from, then each series with
// its patches' subjects; for a package revision, dated at the revision and
// saying first what changed, above an entry for the first packages.
func Changelog(r *matrix.Release, v matrix.Variant, version, rel string, patches []quilt.Patch) string {
	var b strings.Builder
	const day = "Mon Jan 02 2006"
	if pr := r.PackageRevision; pr != nil {
		fmt.Fprintf(&b, "* %s %s - %s-%s\n", pr.Date.UTC().Format(day), maintainer, Version(r), rel)
		b.WriteString(item(fmt.Sprintf("Package revision %d: %s", pr.Number, pr.Changes)))
	} else {
		fmt.Fprintf(&b, "* %s %s - %s-%s\n", r.BuildDate.UTC().Format(day), maintainer, Version(r), rel)
	}
	b.WriteString(item(fmt.Sprintf("kubelet %s: Kubernetes %s from the module zip (%s), vendor/ restored from the lock, with the series %s applied in this order:",
		version, r.ModuleVersion(), r.ModuleSum, strings.Join(r.Series.For(v), ", "))))
	for _, s := range r.Series.For(v) {
		b.WriteString(item(fmt.Sprintf("%s (%s):", s, r.Series.Role(s))))
		for _, p := range patches {
			if p.Series == s {
				b.WriteString(sub(p.Summary()))
			}
		}
	}
	if r.PackageRevision != nil {
		if first, err := Release(r, r.FirstPackageVersion(v)); err == nil {
			fmt.Fprintf(&b, "\n* %s %s - %s-%s\n", r.BuildDate.UTC().Format(day), maintainer, Version(r), first)
			b.WriteString(item("First packages of this release."))
		}
	}
	return b.String()
}

const maintainer = "Kubelet Toolchain <toolchain@kubelet-toolchain.invalid>"

// item renders one changelog item: "- " and continuation lines indented
// by two spaces, at most about 76 columns.
func item(text string) string {
	lines := strings.Split(strings.TrimSuffix(wrap(text), "\n"), "\n")
	return "- " + strings.Join(lines, "\n  ") + "\n"
}

// sub renders a line under an item: indented by two spaces, continuation
// lines by seven (under the patch number's text).
func sub(text string) string {
	lines := strings.Split(strings.TrimSuffix(wrapAt(text, 70), "\n"), "\n")
	return "  " + strings.Join(lines, "\n       ") + "\n"
}

// wrap breaks text into lines of at most about 72 columns.
func wrap(text string) string { return wrapAt(text, 72) }

func wrapAt(text string, width int) string {
	var b, line strings.Builder
	for _, word := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(word) > width {
			b.WriteString(line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	if line.Len() > 0 {
		b.WriteString(line.String() + "\n")
	}
	return b.String()
}

// indentTab indents every line of s by a tab.
func indentTab(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n\t") + "\n"
}

// esc escapes text for a spec: rpm expands %, so a literal one is %%.
func esc(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// PatchLine is a PatchN: line of a spec.
var PatchLine = regexp.MustCompile(`(?m)^Patch([0-9]+):\s*(\S+)\s*$`)

// SpecPatches returns a spec's PatchN file names in N order, and an error
// when the numbers are not 1..n without gaps (autosetup applies in N order).
func SpecPatches(spec []byte) ([]string, error) {
	var names []string
	for i, m := range PatchLine.FindAllSubmatch(spec, -1) {
		if string(m[1]) != fmt.Sprint(i+1) {
			return nil, fmt.Errorf("spec line Patch%s: %s is not Patch%d", m[1], m[2], i+1)
		}
		names = append(names, string(m[2]))
	}
	return names, nil
}

// epoch is SOURCE_DATE_EPOCH for a release.
func epoch(r *matrix.Release) string { return fmt.Sprint(r.BuildDate.Unix()) }
