package dist

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/dockershim"
	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/deb"
	"kubelet-toolchain/scripts/internal/packaging/debsrc"
	"kubelet-toolchain/scripts/internal/packaging/official"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
	"kubelet-toolchain/scripts/internal/packaging/rpm"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/scripts/internal/pipeline/ctoolchain"
)

// DistroNames are the file names of the packages distributions build
// from source: the RPM spec, SRPM and binary RPM, and the Debian source
// package. Source0 of the spec and the Debian orig tarball are one file
// (the restored tree), released as the orig tarball.
type DistroNames struct {
	Spec, SRPM, RPM string
	// ShimRPM is the dockershim subpackage's ("" without one).
	ShimRPM string
	Debian  debsrc.Names
	// Source0 is the restored tree's name in the SRPM; Top its top directory.
	Source0, Top string
}

// DistroNamesFor returns the names for a release's package version.
func DistroNamesFor(r *matrix.Release, version string) (DistroNames, error) {
	d, err := debsrc.NamesFor(version)
	if err != nil {
		return DistroNames{}, err
	}
	n := DistroNames{
		Spec:    rpm.SpecFileName(version),
		SRPM:    rpm.SRPMFileName(version),
		RPM:     rpm.RPMFileName(version),
		Debian:  d,
		Source0: "kubernetes-" + r.Release + "-restored.tar.gz",
		Top:     "kubernetes-" + r.Release,
	}
	if HasShim(r) {
		n.ShimRPM = rpm.ShimRPMFileName(version)
	}
	return n, nil
}

// Files lists the artifacts in the dist directory.
func (n DistroNames) Files() []string {
	files := []string{n.Spec, n.SRPM, n.RPM, n.Debian.DSC, n.Debian.Orig, n.Debian.DebianTar}
	if n.ShimRPM != "" {
		files = append(files, n.ShimRPM)
	}
	return files
}

// distroScratch starts the scratch directories of the restored tree.
const distroScratch = ".distro-"

// distroPackages writes the packages distributions build from source, one
// after the other (dist.go runs them next to the other artifacts): the
// restored tree (fetch + restore, no series) made in a scratch directory
// and written as the orig tarball, then the Debian source package and the
// RPMs built from it. Each file appears only once it is complete.
func distroPackages(ctx context.Context, o Options, dir, version, sum, shimSum string, set *quilt.Set) ([]Artifact, error) {
	m, r, v := o.Matrix, o.Release, o.Variant
	n, err := DistroNamesFor(r, version)
	if err != nil {
		return nil, err
	}
	parent := filepath.Join(m.OutputDir(), r.Release)
	cleanStale(parent, distroScratch+"*", rpm.CheckScratch+"*", debsrc.ScratchPrefix+"*")
	var arts []Artifact
	step := func(names []string, fn func() error) error {
		start := time.Now()
		if err := fn(); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(names, ", "), err)
		}
		for _, name := range names {
			arts = append(arts, Artifact{Name: name, Path: filepath.Join(dir, name), Took: time.Since(start)})
		}
		fmt.Fprintf(o.Log, "    wrote %s (%s)\n", strings.Join(names, ", "), time.Since(start).Round(100*time.Millisecond))
		return nil
	}
	orig := filepath.Join(dir, n.Debian.Orig)
	// The SRPM carries the C toolchain and rebuilds the released bytes; the
	// Debian source builds cgo with the build machine's cc (Debian packages
	// are built on the release they are for: its glibc is the floor).
	cmd, debCmd := BuildCommand(r, v, true), BuildCommand(r, v, false)
	cSource, cPath := cToolchainSource(m, r)
	err = step([]string{n.Debian.Orig}, func() error {
		scratch, err := os.MkdirTemp(parent, distroScratch)
		if err != nil {
			return err
		}
		defer fsutil.RemoveAll(scratch)
		tree := filepath.Join(scratch, n.Top)
		if err := build.Pristine(ctx, build.Options{Matrix: m, Release: r, Variant: v, Log: o.Log}, tree); err != nil {
			return fmt.Errorf("the restored tree: %w", err)
		}
		t := NewTarball()
		if err := t.AddTree(n.Top, tree, nil); err != nil {
			return err
		}
		return t.Write(orig, r.BuildDate)
	})
	if err == nil {
		err = step([]string{n.Debian.DSC, n.Debian.DebianTar}, func() error {
			return debsrc.Build(ctx, debsrc.Options{Release: r, Variant: v, Version: version, SHA256: sum, ShimSHA256: shimSum, Set: set,
				BuildCommand: debCmd, Orig: orig, OutDir: dir, TmpParent: parent, Log: o.Log})
		})
	}
	if err == nil {
		rpms := []string{n.Spec, n.SRPM, n.RPM}
		if n.ShimRPM != "" {
			rpms = append(rpms, n.ShimRPM)
		}
		err = step(rpms, func() error {
			return rpm.Build(ctx, rpm.Options{
				Spec: rpm.SpecInput{Release: r, Variant: v, Version: version, SHA256: sum, ShimSHA256: shimSum,
					Source0: n.Source0, TopDir: n.Top, Patches: set.Patches, BuildCommand: cmd, CToolchain: cSource},
				Source0Path: orig, CToolchainPath: cPath,
				Unit:          []byte(deb.UnitFile(r, v, rpm.SysconfigPath)),
				Sysconfig:     []byte(official.FlagsFile),
				ShimUnit:      []byte(dockershim.Unit(rpm.ShimSysconfigPath)),
				ShimSysconfig: dockershim.FlagsFileData(""),
				SpecOut:       filepath.Join(dir, n.Spec), SRPM: filepath.Join(dir, n.SRPM), RPM: filepath.Join(dir, n.RPM),
				ShimRPM:   filepath.Join(dir, n.ShimRPM),
				TmpParent: parent, Log: o.Log,
			})
		})
	}
	return arts, err
}

// DistroCheck is what checkDistro measured.
type DistroCheck struct {
	RPM    *rpm.CheckResult
	Debian *debsrc.CheckResult
}

// checkDistro checks the distribution packages (Check has matched their
// SHA256SUMS lines): the Debian source unpacked with dpkg-source -x is the
// built tree; the spec's patches are the series, the SRPM holds them and
// Source0 (the orig tarball) and rebuilds to the released kubelet (also
// the sha256 the build recorded and CHECKSUMS'); the RPM installs into a
// throwaway root and runs.
func checkDistro(ctx context.Context, o CheckOptions, n DistroNames, released, recorded, shimReleased string) (*DistroCheck, error) {
	m, r, v := o.Matrix, o.Release, o.Variant
	dir := Dir(m, r)
	version := r.PackageVersion(v)
	parent := filepath.Join(m.OutputDir(), r.Release)
	cleanStale(parent, distroScratch+"*", rpm.CheckScratch+"*", debsrc.ScratchPrefix+"*")
	p := build.PathsFor(m.OutputDir(), r.Release, v)
	// The target's sums list the kubelet and, for a release with a shim,
	// dockershim.
	if sums, err := checksums.Load(p.Binary + ".sha256"); err != nil {
		return nil, err
	} else if built, ok := sums["kubelet"]; ok && built != released {
		return nil, fmt.Errorf("the built kubelet (%s) has sha256 %s, the released one %s: package again", p.Binary, built, released)
	}
	set, err := quilt.Export(m.Root, r, v)
	if err != nil {
		return nil, err
	}
	cSource, cPath := cToolchainSource(m, r)
	res := &DistroCheck{}
	if res.Debian, err = debsrc.Check(ctx, filepath.Join(dir, n.Debian.DSC), p.Tree, set, parent, o.Log); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "ok   %s unpacks with dpkg-source -x to the built tree (%d files, diff -r empty, debian/patches = the quilt export) in %s\n",
		n.Debian.DSC, res.Debian.Files, res.Debian.Took.Round(100*time.Millisecond))
	// The caller has checked the released kubelet against CHECKSUMS; the
	// comparison stays explicit here, so the RPM's is never weaker.
	is := "the released binary's"
	if recorded != "" {
		if recorded != released {
			return nil, fmt.Errorf("the released kubelet has sha256 %s, CHECKSUMS records %s for %s %s", released, recorded, r.Release, v)
		}
		is += " and CHECKSUMS'"
	}
	if res.RPM, err = rpm.Check(ctx, rpm.CheckInput{
		Release: r, Variant: v, Version: version,
		Spec: filepath.Join(dir, n.Spec), SRPM: filepath.Join(dir, n.SRPM), RPM: filepath.Join(dir, n.RPM),
		Patches: set.Patches, Source0: n.Source0, Orig: filepath.Join(dir, n.Debian.Orig),
		CToolchain: cSource, CToolchainPath: cPath,
		SHA256: released, SHA256Is: is, Kubelet: "Kubernetes " + r.GitVersion(v), ColdCache: o.ColdCache, TmpParent: parent, Log: o.Log,
		ShimRPM: shimRPM(dir, n), ShimSHA256: shimReleased, Shim: "Kubernetes " + r.GitVersion(v),
	}); err != nil {
		return nil, err
	}
	return res, nil
}

// shimRPM is the dockershim subpackage's path ("" without one).
func shimRPM(dir string, n DistroNames) string {
	if n.ShimRPM == "" {
		return ""
	}
	return filepath.Join(dir, n.ShimRPM)
}

// cToolchainSource is the SRPM's Source3 for a cgo release: the C
// toolchain's tarball name and where the build verified it ("" without cgo).
func cToolchainSource(m *matrix.Matrix, r *matrix.Release) (name, path string) {
	if !r.CGO {
		return "", ""
	}
	return r.CToolchain.Tarball(), ctoolchain.Tarball(ctoolchain.Root(), r.CToolchain)
}
