// Package debsrc makes the kubelet's Debian source package, format
// 3.0 (quilt): the restored upstream tree as the orig tarball and a
// debian/ directory whose patches/ is the quilt export of the applied
// series, built with dpkg-source -b; and checks one by unpacking it with
// dpkg-source -x and comparing the result with the tree the toolchain
// built.
package debsrc

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/deb"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
	"kubelet-toolchain/tools/execx"
)

// Source is the source package's name.
const Source = deb.Package

// Names are the files of one source package.
type Names struct {
	// Upstream and Revision split the Debian version at its last '-'.
	Upstream, Revision   string
	DSC, Orig, DebianTar string
	// Dir is the unpacked source directory's name.
	Dir string
}

// NamesFor returns the names for a Debian version, which must carry a
// revision (3.0 (quilt) is for non-native packages).
func NamesFor(version string) (Names, error) {
	i := strings.LastIndex(version, "-")
	if i <= 0 || i == len(version)-1 {
		return Names{}, fmt.Errorf("Debian version %q has no upstream-revision split; format 3.0 (quilt) needs one", version)
	}
	up := version[:i]
	return Names{
		Upstream:  up,
		Revision:  version[i+1:],
		DSC:       Source + "_" + version + ".dsc",
		Orig:      Source + "_" + up + ".orig.tar.gz",
		DebianTar: Source + "_" + version + ".debian.tar.xz",
		Dir:       Source + "-" + up,
	}, nil
}

// Options describe one source package.
type Options struct {
	Release *matrix.Release
	Variant matrix.Variant
	// Version is the Debian version, the binary .deb's: 1.9.11+k19-fixes.
	Version string
	// SHA256 is the released kubelet's; ShimSHA256 the released
	// dockershim's, for a release that serves it on its own (the source
	// then builds the dockershim binary package too).
	SHA256, ShimSHA256 string
	Set                *quilt.Set
	// BuildCommand is build.sh's one line (run from the top of a GOPATH).
	BuildCommand string
	// Orig is the orig tarball on disk (the restored tree).
	Orig string
	// OutDir receives the .dsc and .debian.tar.xz (and holds Orig's name).
	OutDir    string
	TmpParent string
	Log       io.Writer
}

// ScratchPrefix starts the names of the scratch directories made under
// TmpParent.
const ScratchPrefix = ".debsrc-"

// Build unpacks the orig tarball in a scratch directory, adds debian/, and
// runs dpkg-source -b there (SOURCE_DATE_EPOCH set, one xz thread); the
// .dsc and .debian.tar.xz are moved into OutDir.
func Build(ctx context.Context, o Options) error {
	if _, err := exec.LookPath("dpkg-source"); err != nil {
		return fmt.Errorf("dpkg-source is needed to build the Debian source package (Debian package dpkg-dev): %w", err)
	}
	n, err := NamesFor(o.Version)
	if err != nil {
		return err
	}
	files, err := DebianFiles(o)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp(o.TmpParent, ScratchPrefix+"build-")
	if err != nil {
		return err
	}
	defer fsutil.RemoveAll(scratch)
	if err := os.Link(o.Orig, filepath.Join(scratch, n.Orig)); err != nil {
		if err := fsutil.CopyFile(o.Orig, filepath.Join(scratch, n.Orig)); err != nil {
			return err
		}
	}
	dir := filepath.Join(scratch, n.Dir)
	if err := extractOrig(ctx, filepath.Join(scratch, n.Orig), dir); err != nil {
		return err
	}
	for name, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, f.Mode); err != nil {
			return err
		}
	}
	mtime := o.Release.BuildDate.UTC()
	if err := filepath.WalkDir(filepath.Join(dir, "debian"), func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, mtime, mtime)
	}); err != nil {
		return err
	}
	start := time.Now()
	if _, err := execx.Run(ctx, execx.Cmd{
		Name: "dpkg-source", Args: []string{"--threads-max=1", "-b", n.Dir}, Dir: scratch,
		Env: []string{fmt.Sprintf("SOURCE_DATE_EPOCH=%d", mtime.Unix()), "LC_ALL=C", "TZ=UTC"},
	}); err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "    dpkg-source -b: %s (%s)\n", n.DSC, time.Since(start).Round(100*time.Millisecond))
	for _, f := range []string{n.DebianTar, n.DSC} {
		if err := os.Rename(filepath.Join(scratch, f), filepath.Join(o.OutDir, f)); err != nil {
			return err
		}
	}
	return nil
}

// extractOrig unpacks an orig tarball's single top directory as dir.
func extractOrig(ctx context.Context, orig, dir string) error {
	tmp := dir + ".orig-unpack"
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	defer fsutil.RemoveAll(tmp)
	if _, err := execx.Run(ctx, execx.Cmd{Name: "tar", Args: []string{"-xzf", orig, "-C", tmp}}); err != nil {
		return err
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	if len(entries) != 1 || !entries[0].IsDir() {
		return fmt.Errorf("%s does not hold exactly one top directory", filepath.Base(orig))
	}
	return os.Rename(filepath.Join(tmp, entries[0].Name()), dir)
}

// CheckResult is what Check measured.
type CheckResult struct {
	Files int
	Took  time.Duration
}

// Check unpacks dsc with dpkg-source -x into a scratch directory, checks
// debian/patches against the series, and compares the unpacked tree
// (debian/ and .pc/ aside) with tree, the one the toolchain built: diff -r
// must find nothing.
func Check(ctx context.Context, dsc, tree string, set *quilt.Set, tmpParent string, log io.Writer) (*CheckResult, error) {
	start := time.Now()
	scratch, err := os.MkdirTemp(tmpParent, ScratchPrefix+"check-")
	if err != nil {
		return nil, err
	}
	defer fsutil.RemoveAll(scratch)
	dir := filepath.Join(scratch, "src")
	out, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-source", Args: []string{"-x", dsc, dir}, Env: []string{"LC_ALL=C"}})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "dpkg-source -x %s:\n  %s\n", filepath.Base(dsc), strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", "\n  "))
	series, err := os.ReadFile(filepath.Join(dir, "debian", "patches", "series"))
	if err != nil {
		return nil, err
	}
	if string(series) != string(set.SeriesFile()) {
		return nil, fmt.Errorf("%s: debian/patches/series is\n%s\nthe export's series is\n%s", filepath.Base(dsc), series, set.SeriesFile())
	}
	for _, p := range set.Patches {
		data, err := os.ReadFile(filepath.Join(dir, "debian", "patches", filepath.FromSlash(p.Name)))
		if err != nil {
			return nil, err
		}
		if string(data) != string(p.Data) {
			return nil, fmt.Errorf("%s: debian/patches/%s differs from the export (%s)", filepath.Base(dsc), p.Name, p.Source)
		}
	}
	for _, d := range []string{"debian", ".pc"} {
		if err := fsutil.RemoveAll(filepath.Join(dir, d)); err != nil {
			return nil, err
		}
	}
	// --no-dereference: symlinks (vendor/k8s.io/* -> staging) compare as links.
	diff, err := execx.Run(ctx, execx.Cmd{Name: "diff", Args: []string{"-r", "--no-dereference", "-q", dir, tree}})
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(diff)), "\n")
		if len(lines) > 40 {
			lines = append(lines[:40], fmt.Sprintf("... and %d more", len(lines)-40))
		}
		return nil, fmt.Errorf("the tree dpkg-source -x unpacks from %s is not the built tree %s (diff -r --no-dereference):\n%s", filepath.Base(dsc), tree, strings.Join(lines, "\n"))
	}
	res := &CheckResult{Took: time.Since(start)}
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			res.Files++
		}
		return nil
	})
	return res, nil
}
