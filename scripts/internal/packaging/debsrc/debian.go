package debsrc

import (
	"fmt"
	"os"
	"strings"

	"kubelet-toolchain/scripts/internal/base/dockershim"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/deb"
	"kubelet-toolchain/scripts/internal/packaging/official"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
)

// File is one file of debian/.
type File struct {
	Data []byte
	Mode os.FileMode
}

// DebianFiles renders debian/: control, rules, changelog, copyright,
// source/format, the systemd unit and default file the .deb installs, and
// patches/ (the quilt export: series plus <series>/NNNN-*.patch). Names are
// relative to the source directory.
func DebianFiles(o Options) (map[string]File, error) {
	if _, err := NamesFor(o.Version); err != nil {
		return nil, err
	}
	r, v := o.Release, o.Variant
	files := map[string]File{
		"debian/control":         {Data: []byte(Control(r, v, o.SHA256, o.ShimSHA256)), Mode: 0o644},
		"debian/rules":           {Data: []byte(Rules(r, v, o.SHA256, o.ShimSHA256, o.BuildCommand)), Mode: 0o755},
		"debian/changelog":       {Data: []byte(Changelog(r, v, o.Version, o.Set.Patches)), Mode: 0o644},
		"debian/copyright":       {Data: []byte(deb.CopyrightFile(r)), Mode: 0o644},
		"debian/source/format":   {Data: []byte("3.0 (quilt)\n"), Mode: 0o644},
		"debian/kubelet.service": {Data: []byte(deb.UnitFile(r, v, deb.ReadsFlags(r))), Mode: 0o644},
	}
	if deb.ShipsFlags(r) {
		files["debian/kubelet.default"] = File{Data: []byte(official.FlagsFile), Mode: 0o644}
	}
	// The .deb's own maintainer scripts, whole: no #DEBHELPER# token, so
	// dh adds nothing to them.
	for name, script := range deb.MaintainerScripts(r, v) {
		files["debian/kubelet."+name] = File{Data: []byte(script), Mode: 0o755}
	}
	if o.ShimSHA256 != "" {
		files["debian/dockershim.service"] = File{Data: []byte(dockershim.Unit("/" + deb.ShimDefaultPath)), Mode: 0o644}
		files["debian/dockershim.default"] = File{Data: dockershim.FlagsFileData(""), Mode: 0o644}
		for name, script := range deb.ShimScripts(r, v) {
			files["debian/dockershim."+name] = File{Data: []byte(script), Mode: 0o755}
		}
	}
	if len(o.Set.Patches) > 0 {
		files["debian/patches/series"] = File{Data: o.Set.SeriesFile(), Mode: 0o644}
	}
	for _, p := range o.Set.Patches {
		files["debian/patches/"+p.Name] = File{Data: p.Data, Mode: 0o644}
	}
	return files, nil
}

// Control is debian/control: the source stanza with what the build needs,
// and the binary package with the .deb's relationships (Depends from
// dh_shlibdeps where the .deb computes libc6's version itself); with
// shimSHA256, the dockershim binary package too.
func Control(r *matrix.Release, v matrix.Variant, sha256, shimSHA256 string) string {
	build := []string{"debhelper-compat (= 13)", "golang-go (>= 2:1.21~)"}
	if r.CGO {
		build = append(build, "libc6-dev")
	}
	var b strings.Builder
	field := func(k, val string) { fmt.Fprintf(&b, "%s: %s\n", k, strings.TrimSuffix(val, "\n")) }
	field("Source", Source)
	field("Section", "admin")
	field("Priority", "optional")
	field("Maintainer", deb.Maintainer)
	field("Build-Depends", strings.Join(build, ", "))
	field("Standards-Version", "4.6.2")
	field("Homepage", "https://github.com/kubernetes/kubernetes")
	field("Rules-Requires-Root", "no")
	binary := func(pkg, depends string, relations [][2]string, desc string) {
		b.WriteString("\n")
		field("Package", pkg)
		field("Architecture", "amd64")
		field("Depends", "${shlibs:Depends}, ${misc:Depends}, "+depends)
		for _, f := range relations {
			field(f[0], f[1])
		}
		field("Description", desc)
	}
	binary(deb.Package, "iptables, mount, init-system-helpers (>= 1.18~)", deb.Relations, deb.Description(r, v, sha256))
	if shimSHA256 != "" {
		binary(deb.ShimPackage, "iptables", deb.ShimRelations, deb.ShimDescription(r, v, shimSHA256))
	}
	return b.String()
}

// Rules is debian/rules: dh with the build as build.sh runs it, from the
// top of a GOPATH (_build) whose src/k8s.io/kubernetes links to the tree,
// and nothing that would change the binary (no strip, no dwz).
func Rules(r *matrix.Release, v matrix.Variant, sha256, shimSHA256, buildCommand string) string {
	// One recipe line per binary (buildCommand has one line each).
	var recipe []string
	for _, l := range strings.Split(buildCommand, "\n") {
		recipe = append(recipe, "cd _build && "+strings.ReplaceAll(l, "$", "$$"))
	}
	install, sums := "", ""
	if shimSHA256 != "" {
		sums = "\n# and the dockershim's:\n#   " + shimSHA256
		install = `
	install -D -m 0755 _build/dockershim debian/dockershim/usr/bin/dockershim
	install -D -m 0644 debian/dockershim.service debian/dockershim/` + deb.ShimUnitPath + `
	install -D -m 0644 debian/dockershim.default debian/dockershim/` + deb.ShimDefaultPath
	}
	return fmt.Sprintf(`#!/usr/bin/make -f
# kubelet %s, built with the toolchain's build.sh line
# from the top of a GOPATH (_build) whose src/k8s.io/kubernetes links to
# this tree. With Go %s (GOTOOLCHAIN in the line: another Go >= 1.21
# fetches it; set it to "local" to build with the installed Go instead)
# the kubelet's sha256 is the released binary's:
#   %s%s

# A build chroot may have no usable HOME: keep the Go cache in the tree
# unless one is given.
export GOCACHE ?= $(CURDIR)/_build/go-build

%%:
	dh $@

override_dh_auto_configure:

override_dh_auto_build:
	mkdir -p _build/src/k8s.io
	ln -sfn ../../.. _build/src/k8s.io/kubernetes
	%s

# The in-tree tests need a GOPATH of their own (make test-tree).
override_dh_auto_test:

override_dh_auto_install:
	install -D -m 0755 _build/kubelet debian/kubelet/usr/bin/kubelet
	install -D -m 0644 debian/kubelet.service debian/kubelet/lib/systemd/system/kubelet.service
	if [ -f debian/kubelet.default ]; then install -D -m 0644 debian/kubelet.default debian/kubelet/etc/default/kubelet; fi%s

# The unit is installed above and debian/kubelet.postinst, .prerm and
# .postrm enable, start and stop it as the official package's did
# (debhelper compat 9); dh_installsystemd would add its own snippets.
override_dh_installsystemd:

# The binary is built without symbols (-s -w) and its sha256 is the
# released one: nothing may rewrite it.
override_dh_strip override_dh_dwz:

override_dh_auto_clean:
	rm -rf _build
`, r.GitVersion(v), r.Go, sha256, sums, strings.Join(recipe, "\n\t"), install)
}

// Changelog is debian/changelog: an entry naming each series and its
// patches, dated at the release's build date; for a package revision,
// dated at the revision and saying first what changed, above an entry for
// the first packages.
func Changelog(r *matrix.Release, v matrix.Variant, version string, patches []quilt.Patch) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s) unstable; urgency=medium\n\n", Source, version)
	date := r.BuildDate
	if pr := r.PackageRevision; pr != nil {
		b.WriteString(item("  * ", fmt.Sprintf("Package revision %d: %s", pr.Number, pr.Changes)))
		date = pr.Date
	}
	b.WriteString(item("  * ", fmt.Sprintf("Kubernetes %s kubelet from the module zip (%s), vendor/ restored from the lock, with the series %s applied in this order (debian/patches/series):",
		r.ModuleVersion(), r.ModuleSum, strings.Join(r.Series.For(v), ", "))))
	for _, s := range r.Series.For(v) {
		b.WriteString(item("  * ", s+" ("+r.Series.Role(s)+"):"))
		for _, p := range patches {
			if p.Series == s {
				b.WriteString(item("    - ", p.Summary()))
			}
		}
	}
	const stamp = "Mon, 02 Jan 2006 15:04:05 -0700"
	fmt.Fprintf(&b, "\n -- %s  %s\n", deb.Maintainer, date.UTC().Format(stamp))
	if r.PackageRevision != nil {
		fmt.Fprintf(&b, "\n%s (%s) unstable; urgency=medium\n\n", Source, r.FirstPackageVersion(v))
		b.WriteString(item("  * ", "First packages of this release."))
		fmt.Fprintf(&b, "\n -- %s  %s\n", deb.Maintainer, r.BuildDate.UTC().Format(stamp))
	}
	return b.String()
}

// item wraps text at about 78 columns behind a bullet, continuation lines
// indented to the text.
func item(bullet, text string) string {
	indent := strings.Repeat(" ", len(bullet))
	var b, line strings.Builder
	line.WriteString(bullet)
	fresh := true
	for _, w := range strings.Fields(text) {
		if !fresh && line.Len()+1+len(w) > 78 {
			b.WriteString(line.String() + "\n")
			line.Reset()
			line.WriteString(indent)
			fresh = true
		}
		if !fresh {
			line.WriteByte(' ')
		}
		line.WriteString(w)
		fresh = false
	}
	b.WriteString(line.String() + "\n")
	return b.String()
}
