package dist

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/packaging/deb"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
	"kubelet-toolchain/scripts/internal/packaging/sbom"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/tools/execx"
)

// CheckOptions select the checks of a packaged release+variant.
type CheckOptions struct {
	Options
	// ColdCache rebuilds with an empty GOCACHE, as a packager's first
	// build would (slower; proves no cached object hides a path leak).
	ColdCache bool
	// Keep keeps the extracted rebuild tree (its path is logged).
	Keep bool
}

// CheckResult reports what the checks measured.
type CheckResult struct {
	// Released is the sha256 of the kubelet in the binary tarball,
	// Rebuilt the one built from the source tarball.
	Released, Rebuilt string
	// ShimReleased and ShimRebuilt are dockershim's, for a release that
	// serves it on its own; ShimVersion what the installed one printed.
	ShimReleased, ShimRebuilt, ShimVersion string
	// Recorded is CHECKSUMS' sha256 for the release and variant ("" when
	// it records none).
	Recorded       string
	RebuildTook    time.Duration
	SBOM           *sbom.Summary
	KubeletVersion string
	// Distro is what the RPM and Debian source checks measured.
	Distro *DistroCheck
}

// Check verifies the artifacts of a packaged release+variant: SHA256SUMS,
// the source tarball rebuilt with its documented command (./build.sh, the
// line BUILD.md shows) reproducing the released binary's sha256, the SBOM
// parsed back and validated (every compiled-in module listed, every patched
// module patched), the .deb inspected and installed into a throwaway root
// whose kubelet --version is the build's, then the RPMs and the Debian
// source package (checkDistro).
func Check(ctx context.Context, o CheckOptions) (*CheckResult, error) {
	m, r, v := o.Matrix, o.Release, o.Variant
	dir := Dir(m, r)
	version := r.PackageVersion(v)
	names := NamesFor(r, version)
	res := &CheckResult{}
	cleanStale(filepath.Join(m.OutputDir(), r.Release), ".rebuild-*", ".deb-root-*")
	sums, err := ReadSums(dir)
	if err != nil {
		return nil, fmt.Errorf("%w (run make package VERSION=%s first)", err, r.Release)
	}
	dn, err := DistroNamesFor(r, version)
	if err != nil {
		return nil, err
	}
	// Every artifact's sum first: a changed file fails here in a second,
	// before the rebuilds.
	for _, n := range append(names.Files(), dn.Files()...) {
		want, ok := sums[n]
		if !ok {
			return nil, fmt.Errorf("%s lists no %s (run make package VERSION=%s VARIANT=%s)", SumsFile, n, r.Release, v)
		}
		got, err := checksums.SHA256(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		if got != want {
			return nil, fmt.Errorf("%s: sha256 %s, %s says %s", n, got, SumsFile, want)
		}
	}
	fmt.Fprintf(o.Log, "ok   %s matches the artifacts (%d files)\n", SumsFile, len(names.Files())+len(dn.Files()))

	res.Released, err = memberSHA256(filepath.Join(dir, names.BinaryTarball), names.BinaryTop+"/kubelet")
	if err != nil {
		return nil, err
	}
	var rebuilt map[string]string
	if rebuilt, res.RebuildTook, err = rebuild(ctx, o, names); err != nil {
		return nil, err
	}
	res.Rebuilt = rebuilt["kubelet"]
	if res.Rebuilt != res.Released {
		return nil, fmt.Errorf("the kubelet rebuilt from %s has sha256 %s; the released one %s", names.SourceTarball, res.Rebuilt, res.Released)
	}
	recorded := ""
	if want, err := checksums.Load(filepath.Join(m.Root, checksums.FileName)); err != nil {
		return nil, err
	} else if exp, ok := want[checksums.Key(r.Release, string(v))]; ok {
		if exp != res.Rebuilt {
			return nil, fmt.Errorf("the kubelet rebuilt from %s has sha256 %s; CHECKSUMS expects %s", names.SourceTarball, res.Rebuilt, exp)
		}
		recorded = " and CHECKSUMS'"
		res.Recorded = exp
	}
	fmt.Fprintf(o.Log, "ok   rebuilt from %s with its documented command in %s: sha256 %s (the released binary's%s)\n", names.SourceTarball, res.RebuildTook.Round(100*time.Millisecond), res.Rebuilt, recorded)

	p := build.PathsFor(m.OutputDir(), r.Release, v)
	set, mods, shimMods, err := patchesAndModules(ctx, m, r, v, p)
	if err != nil {
		return nil, err
	}
	if HasShim(r) {
		if err := checkShim(ctx, o, names, p, set, shimMods, rebuilt[deb.ShimPackage], res); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, names.SBOM))
	if err != nil {
		return nil, err
	}
	if res.SBOM, err = sbom.Validate(data, mods, sbom.PatchedModules(set.Patches, mods, p.Tree)); err != nil {
		return nil, fmt.Errorf("%s: %w", names.SBOM, err)
	}
	if !strings.Contains(string(data), res.Released) {
		return nil, fmt.Errorf("%s does not record the released kubelet's sha256 %s", names.SBOM, res.Released)
	}
	fmt.Fprintf(o.Log, "ok   %s validates: %d packages (%d modules), %d patch files; patched: %s\n", names.SBOM, res.SBOM.Packages, len(mods), res.SBOM.Files, strings.Join(res.SBOM.Patched, ", "))

	res.KubeletVersion, err = deb.Check(ctx, filepath.Join(dir, names.Deb), version, "Kubernetes "+r.GitVersion(v), r.CToolchain.GlibcFloor, filepath.Join(m.OutputDir(), r.Release), o.Log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "ok   %s installs into a throwaway root; its kubelet --version: %s\n", names.Deb, res.KubeletVersion)
	if res.Distro, err = checkDistro(ctx, o, dn, res.Released, res.Recorded, res.ShimReleased); err != nil {
		return nil, err
	}
	return res, nil
}

// rebuild extracts the source tarball with tar(1), as a packager would,
// runs ./build.sh in it, and returns the sha256 of each binary it built.
func rebuild(ctx context.Context, o CheckOptions, names Names) (map[string]string, time.Duration, error) {
	parent := filepath.Join(o.Matrix.OutputDir(), o.Release.Release)
	tmp, err := os.MkdirTemp(parent, ".rebuild-")
	if err != nil {
		return nil, 0, err
	}
	if o.Keep {
		fmt.Fprintf(o.Log, "     keeping %s\n", tmp)
	} else {
		defer fsutil.RemoveAll(tmp)
	}
	if _, err := execx.Run(ctx, execx.Cmd{Name: "tar", Args: []string{"-xzf", filepath.Join(Dir(o.Matrix, o.Release), names.SourceTarball), "-C", tmp}}); err != nil {
		return nil, 0, err
	}
	top := filepath.Join(tmp, names.SourceTop)
	var env []string
	if o.ColdCache {
		env = append(env, "GOCACHE="+filepath.Join(tmp, "gocache"))
	}
	start := time.Now()
	if _, err := execx.Run(ctx, execx.Cmd{Name: "./build.sh", Dir: top, Env: env}); err != nil {
		return nil, 0, err
	}
	took := time.Since(start)
	sums := map[string]string{}
	for _, b := range Binaries(o.Release, o.Variant) {
		if sums[b.Name], err = checksums.SHA256(filepath.Join(top, b.Name)); err != nil {
			return nil, 0, fmt.Errorf("./build.sh of %s: %w", names.SourceTarball, err)
		}
	}
	return sums, took, nil
}

// checkShim checks dockershim's artifacts: the binary tarball's is the
// built one and CHECKSUMS', the source tarball rebuilt it, its SBOM
// validates against the modules it links, its .deb installs and starts
// nothing.
func checkShim(ctx context.Context, o CheckOptions, names Names, p build.Paths, set *quilt.Set, mods []sbom.Module, rebuilt string, res *CheckResult) error {
	m, r, v := o.Matrix, o.Release, o.Variant
	dir := Dir(m, r)
	var err error
	if res.ShimReleased, err = memberSHA256(filepath.Join(dir, names.BinaryTarball), names.BinaryTop+"/"+deb.ShimPackage); err != nil {
		return err
	}
	res.ShimRebuilt = rebuilt
	if rebuilt != res.ShimReleased {
		return fmt.Errorf("the dockershim rebuilt from %s has sha256 %s; the released one %s", names.SourceTarball, rebuilt, res.ShimReleased)
	}
	key := checksums.KeyOf(m.OutputDir(), shimBinary(p))
	want, err := checksums.Load(filepath.Join(m.Root, checksums.FileName))
	if err != nil {
		return err
	}
	if exp, ok := want[key]; !ok || exp != rebuilt {
		return fmt.Errorf("the dockershim rebuilt from %s has sha256 %s; CHECKSUMS has %q for %s", names.SourceTarball, rebuilt, exp, key)
	}
	fmt.Fprintf(o.Log, "ok   dockershim rebuilt from %s by the same ./build.sh: sha256 %s (the released binary's and CHECKSUMS')\n", names.SourceTarball, rebuilt)
	data, err := os.ReadFile(filepath.Join(dir, names.ShimSBOM))
	if err != nil {
		return err
	}
	sum, err := sbom.Validate(data, mods, sbom.PatchedModules(set.Patches, mods, p.Tree))
	if err != nil {
		return fmt.Errorf("%s: %w", names.ShimSBOM, err)
	}
	if !strings.Contains(string(data), rebuilt) {
		return fmt.Errorf("%s does not record the released dockershim's sha256 %s", names.ShimSBOM, rebuilt)
	}
	fmt.Fprintf(o.Log, "ok   %s validates: %d packages (%d modules), %d patch files\n", names.ShimSBOM, sum.Packages, len(mods), sum.Files)
	if res.ShimVersion, err = deb.CheckShim(ctx, filepath.Join(dir, names.ShimDeb), r.PackageVersion(v), "Kubernetes "+r.GitVersion(v), r.CToolchain.GlibcFloor, filepath.Join(m.OutputDir(), r.Release), o.Log); err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "ok   %s installs into a throwaway root, enabling and starting nothing; its dockershim --version: %s\n", names.ShimDeb, res.ShimVersion)
	return nil
}

// memberSHA256 hashes one member of a .tar.gz.
func memberSHA256(tarball, name string) (string, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return "", fmt.Errorf("%s has no %s", tarball, name)
		}
		if err != nil {
			return "", err
		}
		if h.Name == name {
			s := sha256.New()
			if _, err := io.Copy(s, tr); err != nil {
				return "", err
			}
			return hex.EncodeToString(s.Sum(nil)), nil
		}
	}
}

// cleanStale removes what killed runs left in dir under the glob
// patterns (scratch trees, half-written temporaries) once it is a few
// hours old: a younger one may belong to a run still going.
func cleanStale(dir string, patterns ...string) {
	cleanOlder(dir, time.Now().Add(-3*time.Hour), patterns...)
}

// cleanOlder removes what matches patterns in dir and has not changed
// since cutoff. Changed means mtime or ctime: the builds set mtimes to the
// release's build date, which says nothing about when a run last touched
// the file, and ctime records that. Lock files stay: removing one a run
// holds would let a second run lock a new one next to it.
func cleanOlder(dir string, cutoff time.Time, patterns ...string) {
	for _, pat := range patterns {
		old, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, d := range old {
			if strings.HasSuffix(d, ".lock") {
				continue
			}
			fi, err := os.Lstat(d)
			if err != nil || lastChange(fi).After(cutoff) {
				continue
			}
			fsutil.RemoveAll(d)
		}
	}
}

// lastChange is the later of a file's mtime and ctime.
func lastChange(fi os.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(st.Ctim.Unix()); c.After(t) {
			t = c
		}
	}
	return t
}
