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

// Build stages the package tree in a temporary directory next to Out and
// runs dpkg-deb on it. Every file gets the release's build date as mtime
// and dpkg-deb gets it as SOURCE_DATE_EPOCH; owners are root:root.
func Build(ctx context.Context, o Options) error {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return fmt.Errorf("dpkg-deb is needed to build the .deb (Debian package dpkg): %w", err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(o.Out), ".deb-stage-")
	if err != nil {
		return err
	}
	defer fsutil.RemoveAll(stage)
	r := o.Release
	depends, err := Depends(o.Binary)
	if err != nil {
		return err
	}
	files := map[string]struct {
		data []byte
		src  string
		mode os.FileMode
	}{
		DefaultPath:                       {data: []byte(defaultFile(r, o.Variant)), mode: 0o644},
		UnitPath:                          {data: []byte(UnitFile(r, o.Variant, "/"+DefaultPath)), mode: 0o644},
		BinPath:                           {src: o.Binary, mode: 0o755},
		"usr/share/doc/kubelet/copyright": {data: []byte(copyrightFile(r)), mode: 0o644},
	}
	var size int64
	for rel, f := range files {
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
	control := controlFile(r, o, depends, size)
	if err := os.MkdirAll(filepath.Join(stage, "DEBIAN"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		return err
	}
	// /etc/default/kubelet is the admin's: dpkg keeps their edits on upgrade.
	if err := os.WriteFile(filepath.Join(stage, "DEBIAN", "conffiles"), []byte("/"+DefaultPath+"\n"), 0o644); err != nil {
		return err
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

// Depends computes the Depends field: libc6 at the newest GLIBC symbol
// version a dynamically linked (cgo) binary needs, then the tools kubelet
// execs on every node.
func Depends(binary string) (string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return "", err
	}
	libs, _ := f.ImportedLibraries()
	f.Close()
	deps := []string{}
	if len(libs) > 0 {
		for _, l := range libs {
			if !slices.ContainsFunc([]string{"libc.so.", "libpthread.so.", "libdl.so.", "libresolv.so."}, func(p string) bool { return strings.HasPrefix(l, p) }) {
				return "", fmt.Errorf("%s links %s, which the package does not know a dependency for", binary, l)
			}
		}
		newest, err := glibc.Newest(binary)
		if err != nil {
			return "", err
		}
		if newest != "" {
			deps = append(deps, "libc6 (>= "+newest+")")
		} else {
			deps = append(deps, "libc6")
		}
	}
	// iptables: kubelet programs the KUBE-* chains; mount: volume mounts.
	deps = append(deps, "iptables", "mount")
	return strings.Join(deps, ", "), nil
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
	fields := [][2]string{
		{"Package", Package},
		{"Version", o.Version},
		{"Architecture", "amd64"},
		{"Maintainer", maintainer},
		{"Installed-Size", strconv.FormatInt(sizeKiB, 10)},
		{"Depends", depends},
	}
	fields = append(fields, Relations...)
	fields = append(fields, [][2]string{
		{"Section", "admin"},
		{"Priority", "optional"},
		{"Description", description(r, o.Variant, o.SHA256)},
	}...)
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
		"Binary sha256: %s. Configure flags in /etc/default/kubelet; enable with `systemctl enable --now kubelet`.", sha256))
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

// UnitFile is kubelet.service, reading KUBELET_ARGS from envFile
// (/etc/default/kubelet here, /etc/sysconfig/kubelet in the RPM).
func UnitFile(r *matrix.Release, v matrix.Variant, envFile string) string {
	return fmt.Sprintf(`[Unit]
Description=kubelet: the Kubernetes node agent (%s)
Wants=network-online.target
After=network-online.target docker.service

[Service]
EnvironmentFile=-%s
ExecStart=/usr/bin/kubelet $KUBELET_ARGS
Restart=always
RestartSec=10
# kubelet manages cgroups and containers for the whole node.
KillMode=process
Delegate=yes

[Install]
WantedBy=multi-user.target
`, r.GitVersion(v), envFile)
}

func defaultFile(r *matrix.Release, v matrix.Variant) string {
	return fmt.Sprintf(`# Flags for kubelet %s, read by kubelet.service:
#   ExecStart=/usr/bin/kubelet $KUBELET_ARGS
# For example (this release's flags; check kubelet --help):
#   KUBELET_ARGS="--kubeconfig=/etc/kubernetes/kubelet.conf --pod-infra-container-image=%s"
KUBELET_ARGS=""

# This kubelet carries Go's current TLS defaults: its TLS port refuses TLS
# 1.0/1.1 clients (unless --tls-min-version says otherwise, where the release
# has it), 3DES, RSA key exchange and SHA-1 handshake signatures. Only if a
# client that cannot be upgraded needs them back, uncomment:
#GODEBUG=tls3des=1,tlsrsakex=1,tlssha1=1
`, r.GitVersion(v), r.PauseImage)
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

// Check inspects deb with dpkg-deb -I and -c, installs it into a throwaway
// root with dpkg --root (dependencies not installed there, so forced), runs
// the installed kubelet --version and returns its output. wantVersion is
// the Debian version, wantKubelet what --version must print; the root is
// made under tmpParent and removed.
func Check(ctx context.Context, debPath, wantVersion, wantKubelet, glibcFloor, tmpParent string, log io.Writer) (string, error) {
	info, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-deb", Args: []string{"-I", debPath}})
	if err != nil {
		return "", err
	}
	fields, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-deb", Args: []string{"-f", debPath, "Package", "Version", "Architecture"}})
	if err != nil {
		return "", err
	}
	want := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: amd64\n", Package, wantVersion)
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
		if strings.HasPrefix(f[5], "./"+BinPath) && !strings.HasPrefix(f[0], "-rwxr-xr-x") {
			return "", fmt.Errorf("%s: %s has mode %s", debPath, BinPath, f[0])
		}
	}
	sort.Strings(entries)
	for _, p := range []string{BinPath, UnitPath, DefaultPath} {
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
		"--root=" + root, "--log=/dev/null", "--force-depends", "--force-not-root", "--force-script-chrootless", "-i", debPath,
	}})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "dpkg --root=<tmp> -i (%s):\n%s", time.Since(start).Round(10*time.Millisecond), indent(string(out)))
	status, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-query", Args: []string{"--admindir=" + admin, "-W", "-f", "${Status} ${Version}", Package}})
	if err != nil {
		return "", err
	}
	if got := string(status); got != "install ok installed "+wantVersion {
		return "", fmt.Errorf("dpkg records %s as %q in the throwaway root", Package, got)
	}
	ver, err := execx.Run(ctx, execx.Cmd{Name: filepath.Join(root, BinPath), Args: []string{"--version"}})
	if err != nil {
		return "", err
	}
	got := strings.TrimSpace(string(ver))
	if got != wantKubelet {
		return "", fmt.Errorf("installed kubelet --version prints %q, want %q", got, wantKubelet)
	}
	return got, nil
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}
