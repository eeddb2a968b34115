package rpm

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/tools/execx"
)

// Options describe the RPMs of one release+variant.
type Options struct {
	Spec SpecInput
	// Source0Path is the restored tree's tarball on disk; it is copied
	// into SOURCES as Spec.Source0.
	Source0Path string
	// CToolchainPath is the C toolchain's tarball, copied into SOURCES as
	// Spec.CToolchain (a cgo release only).
	CToolchainPath string
	// Unit and Sysconfig are kubelet.service and /etc/sysconfig/kubelet;
	// ShimUnit and ShimSysconfig dockershim's (with Spec.ShimSHA256).
	Unit, Sysconfig, ShimUnit, ShimSysconfig []byte
	// SpecOut, SRPM and RPM are the files to write; ShimRPM the shim's
	// subpackage (with Spec.ShimSHA256).
	SpecOut, SRPM, RPM, ShimRPM string
	// TmpParent is where rpmbuild's scratch _topdir is made.
	TmpParent string
	Log       io.Writer
}

// Scratch directories under TmpParent. A killed check may leave a
// CheckScratch* behind for the caller to clean up; a build's own _topdir
// (ScratchPrefix + "build-" + version) is reclaimed by the next build of
// that version, under its lock.
const (
	ScratchPrefix = ".rpm-"
	CheckScratch  = ScratchPrefix + "check-"
)

// Build writes the spec, builds the SRPM from it with rpmbuild -bs and the
// binary RPM from that SRPM with rpmbuild --rebuild, and checks that the
// RPM's kubelet has the released sha256.
func Build(ctx context.Context, o Options) error {
	if _, err := exec.LookPath("rpmbuild"); err != nil {
		return fmt.Errorf("rpmbuild is needed to build the RPMs (Debian package rpm): %w", err)
	}
	r := o.Spec.Release
	spec, err := Spec(o.Spec)
	if err != nil {
		return err
	}
	// A fixed _topdir, not a temporary name: the SRPM's header keeps the
	// expanded spec (rpm >= 4.15), whose %prep names _sourcedir and
	// _builddir. One build per package version at a time uses it.
	top := filepath.Join(o.TmpParent, ScratchPrefix+"build-"+o.Spec.Version)
	unlock, err := fsutil.Lock(top+".lock", func() { fmt.Fprintf(o.Log, "waiting for another rpmbuild of %s\n", o.Spec.Version) })
	if err != nil {
		return err
	}
	defer unlock()
	if err := fsutil.RemoveAll(top); err != nil {
		return err
	}
	if err := os.MkdirAll(top, 0o755); err != nil {
		return err
	}
	defer fsutil.RemoveAll(top)
	t, err := newTool(ctx, top, r)
	if err != nil {
		return err
	}
	// SOURCES and SPECS, every mtime the build date.
	sources := map[string][]byte{unitSource: o.Unit, sysconfigSource: o.Sysconfig}
	if o.Spec.ShimSHA256 != "" {
		sources[shimUnitSource], sources[shimSysconfigSource] = o.ShimUnit, o.ShimSysconfig
	}
	for _, p := range o.Spec.Patches {
		name := PatchFileName(p)
		if _, dup := sources[name]; dup {
			return fmt.Errorf("two patches would be %s in SOURCES", name)
		}
		sources[name] = p.Data
	}
	srcDir, specDir := filepath.Join(top, "SOURCES"), filepath.Join(top, "SPECS")
	for _, d := range []string{srcDir, specDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for name, data := range sources {
		if err := os.WriteFile(filepath.Join(srcDir, name), data, 0o644); err != nil {
			return err
		}
	}
	if err := fsutil.CopyFile(o.Source0Path, filepath.Join(srcDir, o.Spec.Source0)); err != nil {
		return err
	}
	if o.Spec.CToolchain != "" {
		if err := fsutil.CopyFile(o.CToolchainPath, filepath.Join(srcDir, o.Spec.CToolchain)); err != nil {
			return err
		}
	}
	specPath := filepath.Join(specDir, SpecName)
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		return err
	}
	if err := touchAll(top, r.BuildDate); err != nil {
		return err
	}
	start := time.Now()
	if _, err := t.run(ctx, "rpmbuild", "-bs", "--nodeps", specPath); err != nil {
		return err
	}
	nvr, err := NVR(r, o.Spec.Version)
	if err != nil {
		return err
	}
	srpm := filepath.Join(top, "SRPMS", nvr+".src.rpm")
	fmt.Fprintf(o.Log, "    rpmbuild -bs: %s (%s)\n", filepath.Base(srpm), time.Since(start).Round(100*time.Millisecond))
	start = time.Now()
	rpm, err := t.rebuild(ctx, srpm, nvr)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "    rpmbuild --rebuild: %s (%s)\n", filepath.Base(rpm), time.Since(start).Round(100*time.Millisecond))
	if got, err := t.fileDigest(ctx, rpm, BinPath); err != nil {
		return err
	} else if got != o.Spec.SHA256 {
		return fmt.Errorf("the kubelet in %s has sha256 %s, the build %s: rpmbuild changed it or %%build built another", filepath.Base(rpm), got, o.Spec.SHA256)
	}
	shim := ""
	if o.Spec.ShimSHA256 != "" {
		if shim, err = t.subpackage(nvr); err != nil {
			return err
		}
		if got, err := t.fileDigest(ctx, shim, ShimBinPath); err != nil {
			return err
		} else if got != o.Spec.ShimSHA256 {
			return fmt.Errorf("the dockershim in %s has sha256 %s, the build %s: rpmbuild changed it or %%build built another", filepath.Base(shim), got, o.Spec.ShimSHA256)
		}
	}
	if err := fsutil.WriteFileAtomic(o.SpecOut, spec, 0o644); err != nil {
		return err
	}
	if err := os.Rename(srpm, o.SRPM); err != nil {
		return err
	}
	if shim != "" {
		if err := os.Rename(shim, o.ShimRPM); err != nil {
			return err
		}
	}
	return os.Rename(rpm, o.RPM)
}

// subpackage is the dockershim RPM the last rebuild wrote beside the
// kubelet's (nvr is the kubelet's: the subpackage shares its version).
func (t *tool) subpackage(nvr string) (string, error) {
	shim := filepath.Join(t.top, "RPMS", "x86_64", ShimName+strings.TrimPrefix(nvr, Name)+".x86_64.rpm")
	if _, err := os.Stat(shim); err != nil {
		return "", fmt.Errorf("rpmbuild --rebuild wrote no %s: %w", filepath.Base(shim), err)
	}
	return shim, nil
}

// tool runs rpm and rpmbuild in one scratch _topdir, with HOME there too
// (no ~/.rpmmacros, nothing under the real home) and the macros that make
// packages reproducible.
type tool struct {
	top     string
	env     []string
	defines []string
}

func newTool(ctx context.Context, top string, r *matrix.Release) (*tool, error) {
	// %build runs go with HOME elsewhere: keep the caller's Go caches and
	// go env settings.
	out, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: []string{"env", "GOCACHE", "GOMODCACHE", "GOENV"}})
	if err != nil {
		return nil, err
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 3 {
		return nil, fmt.Errorf("go env GOCACHE GOMODCACHE GOENV printed %q", out)
	}
	t := &tool{top: top, env: []string{
		"HOME=" + top, "LC_ALL=C", "TZ=UTC", "SOURCE_DATE_EPOCH=" + epoch(r),
		"GOCACHE=" + vals[0], "GOMODCACHE=" + vals[1], "GOENV=" + vals[2],
	}}
	for _, d := range [][2]string{
		{"_topdir", top},
		{"_dbpath", filepath.Join(top, "rpmdb")},
		{"_buildhost", "reproducible"},
		{"use_source_date_epoch_as_buildtime", "1"},
		{"clamp_mtime_to_source_date_epoch", "1"},
		// gzip and xz, single-threaded: the same bytes on any machine, and
		// payloads CentOS 7's rpm 4.11 reads (it predates zstd). xz -2: a
		// quarter of -6's time for 10% more bytes, on a binary that rpmbuild
		// compresses on every package and check.
		{"_source_payload", "w9.gzdio"},
		{"_binary_payload", "w2.xzdio"},
	} {
		t.defines = append(t.defines, "--define", d[0]+" "+d[1])
	}
	return t, nil
}

func (t *tool) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return execx.Run(ctx, execx.Cmd{Name: name, Args: append(append([]string{}, t.defines...), args...), Dir: t.top, Env: t.env})
}

// rebuild runs rpmbuild --rebuild on srpm and returns the binary RPM.
func (t *tool) rebuild(ctx context.Context, srpm, nvr string) (string, error) {
	if _, err := t.run(ctx, "rpmbuild", "--rebuild", "--nodeps", srpm); err != nil {
		return "", err
	}
	rpm := filepath.Join(t.top, "RPMS", "x86_64", nvr+".x86_64.rpm")
	if _, err := os.Stat(rpm); err != nil {
		return "", fmt.Errorf("rpmbuild --rebuild %s wrote no %s: %w", filepath.Base(srpm), filepath.Base(rpm), err)
	}
	return rpm, nil
}

// query runs rpm -qp --qf format on a package file.
func (t *tool) query(ctx context.Context, pkg, format string) (string, error) {
	out, err := t.run(ctx, "rpm", "-qp", "--qf", format, pkg)
	return string(out), err
}

// fileDigest returns the sha256 rpm records for path in pkg.
func (t *tool) fileDigest(ctx context.Context, pkg, path string) (string, error) {
	out, err := t.query(ctx, pkg, "%{FILEDIGESTALGO}\n[%{FILEDIGESTS} %{FILENAMES}\n]")
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// 8 is SHA256 (RFC 4880's number, as rpm uses it).
	if lines[0] != "8" {
		return "", fmt.Errorf("%s: file digests are algorithm %s, not SHA256 (8)", filepath.Base(pkg), lines[0])
	}
	for _, l := range lines[1:] {
		if d, p, ok := strings.Cut(l, " "); ok && p == path {
			return d, nil
		}
	}
	return "", fmt.Errorf("%s has no %s:\n%s", filepath.Base(pkg), path, out)
}

// touchAll sets every mtime under dir to t.
func touchAll(dir string, t time.Time) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, t, t)
	})
}

// sameFile says whether two files have the same bytes.
func sameFile(a, b string) (bool, error) {
	x, err := checksums.SHA256(a)
	if err != nil {
		return false, err
	}
	y, err := checksums.SHA256(b)
	return x == y, err
}
