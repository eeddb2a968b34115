// Package deb builds the kubelet .deb with Debian's own dpkg-deb and checks
// one: its control fields and file list (dpkg-deb -I / -c), then an
// install into a throwaway root with dpkg --root and `kubelet --version`
// run from there.
package deb

import (
	"context"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/official"
	"kubelet-toolchain/scripts/internal/packaging/scratchroot"
	"kubelet-toolchain/scripts/internal/pipeline/glibc"
	"kubelet-toolchain/tools/execx"
)

// Package is the Debian package name. It is the name upstream's own
// packages use, so this build upgrades or replaces one in place.
const Package = "kubelet"

const maintainer = "Kubelet Toolchain <toolchain@kubelet-toolchain.invalid>"

// Installed paths.
const (
	BinPath     = "usr/bin/kubelet"
	UnitPath    = "lib/systemd/system/kubelet.service"
	DefaultPath = "etc/default/kubelet"
)

// Options describe one .deb.
type Options struct {
	Release *matrix.Release
	Variant matrix.Variant
	// Version is the Debian version, <upstream>+<series>.
	Version string
	Binary  string
	SHA256  string
	// Out is the .deb to write.
	Out string
}

// FileName is the conventional name of the .deb: name_version_arch.deb.
func FileName(version string) string { return fmt.Sprintf("%s_%s_amd64.deb", Package, version) }

// file is one file a .deb installs: data, or a file to copy.
type file struct {
	data []byte
	src  string
	mode os.FileMode
}

// contents is one binary package: its files, conffiles, control file and
// maintainer scripts.
type contents struct {
	files     map[string]file
	conffiles []string
	control   string
	scripts   map[string]string
}

// Build writes the kubelet's .deb.
func Build(ctx context.Context, o Options) error {
	depends, err := Depends(o.Binary)
	if err != nil {
		return err
	}
	r := o.Release
	c := contents{
		files: map[string]file{
			UnitPath:                          {data: []byte(UnitFile(r, o.Variant, ReadsFlags(r))), mode: 0o644},
			BinPath:                           {src: o.Binary, mode: 0o755},
			"usr/share/doc/kubelet/copyright": {data: []byte(copyrightFile(r)), mode: 0o644},
		},
		scripts: MaintainerScripts(r, o.Variant),
	}
	// /etc/default/kubelet is the admin's: dpkg keeps their edits on upgrade.
	if ShipsFlags(r) {
		c.files[DefaultPath] = file{data: []byte(official.FlagsFile), mode: 0o644}
		c.conffiles = []string{"/" + DefaultPath}
	}
	return build(ctx, o, c, func(sizeKiB int64) string { return controlFile(r, o, depends, sizeKiB) })
}

// build stages c in a temporary directory next to o.Out and runs dpkg-deb
// on it. Every file gets the release's build date as mtime and dpkg-deb
// gets it as SOURCE_DATE_EPOCH; owners are root:root. control renders the
// control file for the installed size.
func build(ctx context.Context, o Options, c contents, control func(sizeKiB int64) string) error {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return fmt.Errorf("dpkg-deb is needed to build the .deb (Debian package dpkg): %w", err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(o.Out), ".deb-stage-")
	if err != nil {
		return err
	}
	defer fsutil.RemoveAll(stage)
	r := o.Release
	var size int64
	for rel, f := range c.files {
		dst := filepath.Join(stage, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if f.src != "" {
			if err := fsutil.CopyFile(f.src, dst); err != nil {
				return err
			}
		} else if err := os.WriteFile(dst, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Chmod(dst, f.mode); err != nil {
			return err
		}
		fi, err := os.Stat(dst)
		if err != nil {
			return err
		}
		size += (fi.Size() + 1023) / 1024
	}
	if err := os.MkdirAll(filepath.Join(stage, "DEBIAN"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, "DEBIAN", "control"), []byte(control(size)), 0o644); err != nil {
		return err
	}
	if len(c.conffiles) > 0 {
		if err := os.WriteFile(filepath.Join(stage, "DEBIAN", "conffiles"), []byte(strings.Join(c.conffiles, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	for name, script := range c.scripts {
		if err := os.WriteFile(filepath.Join(stage, "DEBIAN", name), []byte(script), 0o755); err != nil {
			return err
		}
	}
	mtime := r.BuildDate.UTC()
	if err := filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if err := os.Chmod(p, 0o755); err != nil {
				return err
			}
		}
		return os.Chtimes(p, mtime, mtime)
	}); err != nil {
		return err
	}
	tmp := o.Out + ".tmp"
	defer os.Remove(tmp)
	if _, err := execx.Run(ctx, execx.Cmd{
		Name: "dpkg-deb",
		// xz, single-threaded: the same bytes on any machine.
		Args: []string{"--root-owner-group", "-Zxz", "--threads-max=1", "--build", stage, tmp},
		Env:  []string{fmt.Sprintf("SOURCE_DATE_EPOCH=%d", mtime.Unix())},
	}); err != nil {
		return err
	}
	return os.Rename(tmp, o.Out)
}

// Depends computes the kubelet's Depends field: libc6 at the newest GLIBC
// symbol version a dynamically linked (cgo) binary needs, then the tools
// kubelet execs on every node.
func Depends(binary string) (string, error) {
	deps, err := libcDepends(binary)
	if err != nil {
		return "", err
	}
	// iptables: kubelet programs the KUBE-* chains; mount: volume mounts;
	// init-system-helpers: the maintainer scripts' deb-systemd-helper and
	// deb-systemd-invoke, at the version debhelper asked for then.
	deps = append(deps, "iptables", "mount", "init-system-helpers (>= 1.18~)")
	return strings.Join(deps, ", "), nil
}

// libcDepends is libc6 at the newest GLIBC symbol version binary needs
// (nothing for a static binary).
func libcDepends(binary string) ([]string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return nil, err
	}
	libs, _ := f.ImportedLibraries()
	f.Close()
	if len(libs) == 0 {
		return nil, nil
	}
	for _, l := range libs {
		if !slices.ContainsFunc([]string{"libc.so.", "libpthread.so.", "libdl.so.", "libresolv.so."}, func(p string) bool { return strings.HasPrefix(l, p) }) {
			return nil, fmt.Errorf("%s links %s, which the package does not know a dependency for", binary, l)
		}
	}
	newest, err := glibc.Newest(binary)
	if err != nil {
		return nil, err
	}
	if newest != "" {
		return []string{"libc6 (>= " + newest + ")"}, nil
	}
	return []string{"libc6"}, nil
}

var libc6RE = regexp.MustCompile(`libc6 \(>= ([0-9.]+)\)`)

// DependsFloor fails when a Depends field asks for a libc6 newer than
// the glibc floor: apt would refuse the package there, and the loader the
// kubelet.
func DependsFloor(depends, floor string) error {
	if m := libc6RE.FindStringSubmatch(depends); m != nil && glibc.Compare(m[1], floor) > 0 {
		return fmt.Errorf("Depends: %s asks for libc6 %s, newer than the glibc floor %s", strings.TrimSpace(depends), m[1], floor)
	}
	return nil
}

func controlFile(r *matrix.Release, o Options, depends string, sizeKiB int64) string {
	return control(Package, o.Version, depends, sizeKiB, Relations, description(r, o.Variant, o.SHA256))
}

// control renders a binary package's control file.
func control(pkg, version, depends string, sizeKiB int64, relations [][2]string, desc string) string {
	fields := [][2]string{
		{"Package", pkg},
		{"Version", version},
		{"Architecture", "amd64"},
		{"Maintainer", maintainer},
		{"Installed-Size", strconv.FormatInt(sizeKiB, 10)},
		{"Depends", depends},
	}
	fields = append(fields, relations...)
	fields = append(fields, [][2]string{{"Section", "admin"}, {"Priority", "optional"}, {"Description", desc}}...)
	var b strings.Builder
	for _, f := range fields {
		fmt.Fprintf(&b, "%s: %s\n", f[0], strings.TrimSuffix(f[1], "\n"))
	}
	return b.String()
}

func description(r *matrix.Release, v matrix.Variant, sha256 string) string {
	series := r.Series.For(v)
	what := "upstream with no patch series"
	if len(series) > 0 {
		what = "with the patch series " + strings.Join(series, ", ") + " applied"
	}
	return fmt.Sprintf("Kubernetes node agent %s (%s)\n", r.ModuleVersion(), v) + wrap(fmt.Sprintf(
		"The kubelet of Kubernetes %s, built reproducibly from the pinned upstream release %s (`kubelet --version`: Kubernetes %s).",
		r.ModuleVersion(), what, r.GitVersion(v))) + " .\n" + wrap(fmt.Sprintf(
		"Binary sha256: %s. Installed, it takes the place of the official kubelet package of its release: same files, same flags file (KUBELET_EXTRA_ARGS in /etc/default/kubelet, which kubeadm's drop-in reads too), enabled and started as that package was.", sha256))
}

// wrap formats text as extended-description lines: a leading space, at
// most about 72 columns, each ending in a newline.
func wrap(text string) string {
	var b, line strings.Builder
	for _, w := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(w) > 72 {
			b.WriteString(" " + line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	if line.Len() > 0 {
		b.WriteString(" " + line.String() + "\n")
	}
	return b.String()
}

// ShipsFlags says whether r's .deb ships /etc/default/kubelet: where the
// official .deb of the release did, with its bytes (a conffile whose
// bytes match moves between the packages without a question).
func ShipsFlags(r *matrix.Release) bool { return official.DebShipsFlags(r.BuildDate) }

// ReadsFlags is the flags file r's .deb unit reads: /etc/default/kubelet
// from 1.11, where kubeadm's drop-in reads it too; before, none, as the
// official unit (the official /etc/default/kubelet of 1.8/1.9 sets
// KUBELET_EXTRA_ARGS= and would blank what kubeadm's era set in drop-ins).
func ReadsFlags(r *matrix.Release) string {
	if official.DropInReadsFlags(r.Version().Minor) {
		return "/" + DefaultPath
	}
	return ""
}

// UnitFile is kubelet.service: the official package's unit (kubernetes/
// release), reading flagsFile ("" for none) as kubeadm's drop-in of the
// release does. kubeadm's drop-in replaces its ExecStart with its own.
func UnitFile(r *matrix.Release, v matrix.Variant, flagsFile string) string {
	env := ""
	if flagsFile != "" {
		env = fmt.Sprintf("# The flags file kubeadm's drop-in reads too.\nEnvironmentFile=-%s\n", flagsFile)
	}
	return fmt.Sprintf(`[Unit]
Description=kubelet: The Kubernetes Node Agent (%s)
Documentation=https://kubernetes.io/docs/

[Service]
# KUBELET_EXTRA_ARGS, as the official packages' kubeadm drop-in passes it;
# KUBELET_ARGS, as this toolchain's packages before read it. This kubelet
# carries Go's current TLS defaults: only if a client that cannot be
# upgraded needs TLS 1.0/1.1, 3DES, RSA key exchange or SHA-1 handshake
# signatures, set GODEBUG=tls3des=1,tlsrsakex=1,tlssha1=1 for it.
%sExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS $KUBELET_ARGS
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
`, r.GitVersion(v), env)
}

// MaintainerScripts are the .deb's postinst, prerm and postrm: what
// debhelper (compat 9, dh_systemd_enable and dh_systemd_start) made for
// the official kubelet package of every release of the era, so the kubelet
// is enabled on first install (a disable is kept), stopped by the old
// package's prerm and started by the new package's postinst, on upgrade
// and rollback alike: the official package's prerm stops it when ours
// replaces it, and ours when the official one comes back. The postinst
// also makes /etc/kubernetes/manifests, as the official one did.
func MaintainerScripts(r *matrix.Release, v matrix.Variant) map[string]string {
	head := fmt.Sprintf("#!/bin/sh\n# kubelet %s: as the official kubelet package's (kubernetes/release,\n# debhelper compat 9); see docs/packaging.md.\nset -e\n", r.GitVersion(v))
	migrate := ""
	if ReadsFlags(r) == "" {
		// This toolchain's packages before read KUBELET_ARGS from
		// /etc/default/kubelet, which this unit does not read: an
		// operator's flags there keep reaching the kubelet.
		migrate = `	if grep -Eq '^KUBELET_ARGS=.*[^" ]' /etc/default/kubelet 2>/dev/null; then
		mkdir -p /etc/systemd/system/kubelet.service.d
		printf '# Made by the kubelet package: KUBELET_ARGS, as its earlier packages read it.\n[Service]\nEnvironmentFile=-/etc/default/kubelet\n' > /etc/systemd/system/kubelet.service.d/05-kubelet-args.conf
	fi
`
	}
	return map[string]string{
		"postinst": head + `case "$1" in
configure|abort-upgrade|abort-deconfigure|abort-remove)
	mkdir -p /etc/kubernetes/manifests
` + migrate + `
	# This will only remove masks created by d-s-h on package removal.
	deb-systemd-helper unmask kubelet.service >/dev/null || true
	# was-enabled defaults to true, so new installations run enable.
	if deb-systemd-helper --quiet was-enabled kubelet.service; then
		deb-systemd-helper enable kubelet.service >/dev/null || true
	else
		deb-systemd-helper update-state kubelet.service >/dev/null || true
	fi
	# The old package's prerm stopped the kubelet: this starts the new one.
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		deb-systemd-invoke start kubelet.service >/dev/null || true
	fi
	;;
esac
exit 0
`,
		"prerm": head + `if [ -d /run/systemd/system ]; then
	deb-systemd-invoke stop kubelet.service >/dev/null || true
fi
exit 0
`,
		"postrm": head + `if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = "remove" ] && [ -x /usr/bin/deb-systemd-helper ]; then
	deb-systemd-helper mask kubelet.service >/dev/null || true
fi
if [ "$1" = "purge" ] && [ -x /usr/bin/deb-systemd-helper ]; then
	deb-systemd-helper purge kubelet.service >/dev/null || true
	deb-systemd-helper unmask kubelet.service >/dev/null || true
fi
exit 0
`,
	}
}

func copyrightFile(r *matrix.Release) string {
	return fmt.Sprintf(`Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: kubernetes
Comment: kubelet built from the Go module k8s.io/kubernetes@%s with its
 vendored dependencies; their modules and versions are listed in the SPDX
 document released next to this package.

Files: *
Copyright: The Kubernetes Authors
License: Apache-2.0
 On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0.
`, r.ModuleVersion())
}

// Check inspects the kubelet's deb with dpkg-deb -I and -c, installs it
// into a throwaway root with dpkg --root (dependencies not installed
// there, so forced), checks the postinst enabled and started the kubelet,
// runs the installed kubelet --version and returns its output. wantVersion
// is the Debian version, wantKubelet what --version must print; the root
// is made under tmpParent and removed.
func Check(ctx context.Context, debPath, wantVersion, wantKubelet, glibcFloor, tmpParent string, log io.Writer) (string, error) {
	return check(ctx, checkSpec{pkg: Package, bin: BinPath, unit: UnitPath, installed: func(root string, out []byte) error {
		// As the official package: enabled and started on first install.
		if _, err := os.Lstat(filepath.Join(root, "etc/systemd/system/multi-user.target.wants/kubelet.service")); err != nil {
			calls, _ := scratchroot.Calls(root)
			return fmt.Errorf("the postinst did not enable kubelet.service in the throwaway root: %w; the calls:\n%s\n%s", err, strings.Join(calls, "\n"), out)
		}
		if st := scratchroot.UnitState(root, "kubelet.service"); st != "active" {
			calls, _ := scratchroot.Calls(root)
			return fmt.Errorf("the postinst did not start kubelet.service (state %q); the calls:\n%s", st, strings.Join(calls, "\n"))
		}
		return nil
	}}, debPath, wantVersion, wantKubelet, glibcFloor, tmpParent, log)
}

// checkSpec is what one binary package must install and do.
type checkSpec struct {
	pkg, bin, unit string
	// installed checks the throwaway root after dpkg -i (out is its output).
	installed func(root string, out []byte) error
}

func check(ctx context.Context, c checkSpec, debPath, wantVersion, wantBinary, glibcFloor, tmpParent string, log io.Writer) (string, error) {
	info, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-deb", Args: []string{"-I", debPath}})
	if err != nil {
		return "", err
	}
	fields, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-deb", Args: []string{"-f", debPath, "Package", "Version", "Architecture"}})
	if err != nil {
		return "", err
	}
	want := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: amd64\n", c.pkg, wantVersion)
	if string(fields) != want {
		return "", fmt.Errorf("%s: control fields\n%s\nwant\n%s\n(dpkg-deb -I:\n%s)", debPath, fields, want, info)
	}
	depends, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-deb", Args: []string{"-f", debPath, "Depends"}})
	if err != nil {
		return "", err
	}
	if err := DependsFloor(string(depends), glibcFloor); err != nil {
		return "", fmt.Errorf("%s: %w", debPath, err)
	}
	list, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-deb", Args: []string{"-c", debPath}})
	if err != nil {
		return "", err
	}
	var entries []string
	for _, l := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		if f[1] != "root/root" {
			return "", fmt.Errorf("%s: %s is owned by %s, not root/root", debPath, f[len(f)-1], f[1])
		}
		entries = append(entries, strings.TrimPrefix(f[5], "./"))
		if strings.HasPrefix(f[5], "./"+c.bin) && !strings.HasPrefix(f[0], "-rwxr-xr-x") {
			return "", fmt.Errorf("%s: %s has mode %s", debPath, c.bin, f[0])
		}
	}
	sort.Strings(entries)
	for _, p := range []string{c.bin, c.unit} {
		if i := sort.SearchStrings(entries, p); i == len(entries) || entries[i] != p {
			return "", fmt.Errorf("%s does not install /%s; it holds:\n%s", debPath, p, list)
		}
	}
	fmt.Fprintf(log, "dpkg-deb -I %s:\n%s", filepath.Base(debPath), indent(string(info)))
	fmt.Fprintf(log, "dpkg-deb -c %s:\n%s", filepath.Base(debPath), indent(string(list)))

	root, err := os.MkdirTemp(tmpParent, ".deb-root-")
	if err != nil {
		return "", err
	}
	defer fsutil.RemoveAll(root)
	// A shell there: dpkg runs the maintainer scripts chrooted into the
	// root (the systemd tools they call are stand-ins that record).
	if err := scratchroot.Prepare(root); err != nil {
		return "", err
	}
	admin := filepath.Join(root, "var", "lib", "dpkg")
	for _, d := range []string{"info", "updates", "triggers"} {
		if err := os.MkdirAll(filepath.Join(admin, d), 0o755); err != nil {
			return "", err
		}
	}
	for _, f := range []string{"status", "available"} {
		if err := os.WriteFile(filepath.Join(admin, f), nil, 0o644); err != nil {
			return "", err
		}
	}
	start := time.Now()
	out, err := execx.Run(ctx, execx.Cmd{Name: "dpkg", Args: []string{
		"--root=" + root, "--log=/dev/null", "--force-depends", "-i", debPath,
	}})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "dpkg --root=<tmp> -i (%s):\n%s", time.Since(start).Round(10*time.Millisecond), indent(string(out)))
	status, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-query", Args: []string{"--admindir=" + admin, "-W", "-f", "${Status} ${Version}", c.pkg}})
	if err != nil {
		return "", err
	}
	if got := string(status); got != "install ok installed "+wantVersion {
		return "", fmt.Errorf("dpkg records %s as %q in the throwaway root", c.pkg, got)
	}
	if err := c.installed(root, out); err != nil {
		return "", err
	}
	ver, err := execx.Run(ctx, execx.Cmd{Name: filepath.Join(root, c.bin), Args: []string{"--version"}})
	if err != nil {
		return "", err
	}
	got := strings.TrimSpace(string(ver))
	if got != wantBinary {
		return "", fmt.Errorf("installed %s --version prints %q, want %q", filepath.Base(c.bin), got, wantBinary)
	}
	return got, nil
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}
