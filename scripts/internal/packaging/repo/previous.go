package repo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/dist"
	"kubelet-toolchain/scripts/internal/packaging/rpm"
	"kubelet-toolchain/tools/execx"
)

// PreviousDir is where the previous revisions' packages are built, one
// directory per commit (_output/previous/<commit>).
func PreviousDir(m *matrix.Matrix, commit string) string {
	return filepath.Join(m.OutputDir(), "previous", commit)
}

// BuildPrevious builds the packages r's current revision replaces, from
// the commit that made them (packageRevision.previous): that commit's
// tree, taken from this repository's history with git archive, runs its
// own make package. They are kept under PreviousDir and reused.
func BuildPrevious(ctx context.Context, m *matrix.Matrix, r *matrix.Release, v matrix.Variant, log io.Writer) (deb, rpmFile string, err error) {
	pr := r.PackageRevision
	if pr == nil || pr.Previous == "" {
		return "", "", fmt.Errorf("release %s: versions.yaml names no packageRevision.previous commit to build the previous packages from", r.Release)
	}
	version := r.PreviousPackageVersion(v)
	top := PreviousDir(m, pr.Previous)
	d := filepath.Join(top, "_output", r.Release, "dist")
	deb, rpmFile = filepath.Join(d, dist.NamesFor(r, version).Deb), filepath.Join(d, rpm.RPMFileName(version))
	if _, err := os.Stat(deb); err == nil {
		if _, err := os.Stat(rpmFile); err == nil {
			fmt.Fprintf(log, "    previous revision %s: the packages commit %.12s made, built before\n", version, pr.Previous)
			return deb, rpmFile, nil
		}
	}
	start := time.Now()
	fmt.Fprintf(log, "    previous revision %s: building its packages from commit %.12s (its own make package)\n", version, pr.Previous)
	if _, err := os.Stat(filepath.Join(top, "Makefile")); err != nil {
		tmp := top + ".new"
		if err := fsutil.RemoveAll(tmp); err != nil {
			return "", "", err
		}
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return "", "", err
		}
		archive := tmp + ".tar"
		defer os.Remove(archive)
		if _, err := execx.Run(ctx, execx.Cmd{Name: "git", Args: []string{"-C", m.Root, "archive", "--output", archive, pr.Previous}}); err != nil {
			return "", "", fmt.Errorf("release %s: the previous revision's commit %s is not in this repository's history (a clone, not an export, is needed): %w", r.Release, pr.Previous, err)
		}
		if _, err := execx.Run(ctx, execx.Cmd{Name: "tar", Args: []string{"-xf", archive, "-C", tmp}}); err != nil {
			return "", "", err
		}
		if err := fsutil.ReplaceDir(tmp, top); err != nil {
			return "", "", err
		}
	}
	// Its own make, its own CLI and _output; the Go and download caches
	// are shared, as any build on this machine shares them.
	logFile := filepath.Join(top, "package.log")
	out, err := execx.Run(ctx, execx.Cmd{Name: "make", Args: []string{"--no-print-directory", "package", "VERSION=" + r.Release, "VARIANT=" + string(v)},
		Dir: top, Env: []string{"MAKEFLAGS=", "MFLAGS=", "MAKELEVEL="}, Timeout: 90 * time.Minute})
	if werr := os.WriteFile(logFile, out, 0o644); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return "", "", fmt.Errorf("release %s: building the previous revision %s at commit %.12s failed (its log: %s): %w", r.Release, version, pr.Previous, logFile, err)
	}
	for _, p := range []string{deb, rpmFile} {
		if _, err := os.Stat(p); err != nil {
			return "", "", fmt.Errorf("release %s: commit %.12s's make package wrote no %s (its log: %s)", r.Release, pr.Previous, filepath.Base(p), logFile)
		}
	}
	fmt.Fprintf(log, "    previous revision %s built in %s\n", version, time.Since(start).Round(time.Second))
	return deb, rpmFile, nil
}
