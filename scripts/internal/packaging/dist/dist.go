// Package dist makes the release artifacts packagers take, in
// _output/<release>/dist/: the binary tarball (kubelet, LICENSE, the
// applied patch series in quilt form), the patched source tarball (the
// tree exactly as built, vendor/ included, with a one-line build command
// that reproduces the binary), the SPDX SBOM, the .deb, the packages
// distributions build from source (RPM spec, SRPM and RPM, Debian source
// package; distro.go), and SHA256SUMS of them all. Tarballs are
// reproducible: sorted, root-owned, mtimes at the release's build date,
// gzip without name or time.
package dist

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/deb"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
	"kubelet-toolchain/scripts/internal/packaging/sbom"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/scripts/internal/pipeline/ctoolchain"
	"kubelet-toolchain/scripts/internal/pipeline/lock"
)

// SumsFile lists the sha256 of every artifact in the dist directory
// (sha256sum -c format).
const SumsFile = "SHA256SUMS"

// patchDir is where the binary tarball holds the quilt export.
const patchDir = "patches"

// Names are the artifact file names of one release+variant.
type Names struct {
	BinaryTarball, SourceTarball, SBOM, Deb string
	// BinaryTop and SourceTop are the tarballs' top directories.
	BinaryTop, SourceTop string
	// ShimSBOM and ShimDeb are dockershim's, for a release that serves it
	// on its own ("" for the others).
	ShimSBOM, ShimDeb string
}

// NamesFor returns the artifact names of r's package version.
func NamesFor(r *matrix.Release, version string) Names {
	n := Names{
		BinaryTarball: "kubelet-" + version + "-linux-amd64.tar.gz",
		BinaryTop:     "kubelet-" + version + "-linux-amd64",
		SourceTarball: "kubelet-" + version + "-src.tar.gz",
		SourceTop:     "kubelet-" + version,
		SBOM:          "kubelet-" + version + ".spdx.json",
		Deb:           deb.FileName(version),
	}
	if HasShim(r) {
		n.ShimSBOM = deb.ShimPackage + "-" + version + ".spdx.json"
		n.ShimDeb = deb.ShimFileName(version)
	}
	return n
}

// Files lists the artifacts besides the distributions' packages.
func (n Names) Files() []string {
	files := []string{n.BinaryTarball, n.SourceTarball, n.SBOM, n.Deb}
	if n.ShimDeb != "" {
		files = append(files, n.ShimSBOM, n.ShimDeb)
	}
	return files
}

// HasShim says whether r's packages carry its dockershim served on its
// own: a second binary package (dockershim), from the same source.
func HasShim(r *matrix.Release) bool { return r.Series.Shim != "" }

// shimBinary is dockershim as r's kubelet target built it.
func shimBinary(p build.Paths) string { return p.In(deb.ShimPackage) }

// Dir is the dist directory of a release.
func Dir(m *matrix.Matrix, r *matrix.Release) string {
	return filepath.Join(m.OutputDir(), r.Release, "dist")
}

// Options is one packaging request; the kubelet must already be built.
type Options struct {
	Matrix  *matrix.Matrix
	Release *matrix.Release
	Variant matrix.Variant
	// SHA256 is the built binary's, as the build reported it.
	SHA256 string
	Log    io.Writer
}

// Artifact is one file written.
type Artifact struct {
	Name   string
	Path   string
	Size   int64
	SHA256 string
	Took   time.Duration
}

// Result is what Package wrote.
type Result struct {
	Dir       string
	Version   string
	Artifacts []Artifact
	Modules   int
	Patches   int
}

// Package writes the artifacts of o into the release's dist directory.
func Package(ctx context.Context, o Options) (*Result, error) {
	m, r, v := o.Matrix, o.Release, o.Variant
	p := build.PathsFor(m.OutputDir(), r.Release, v)
	sum, err := checksums.SHA256(p.Binary)
	if err != nil {
		return nil, err
	}
	if o.SHA256 != "" && sum != o.SHA256 {
		return nil, fmt.Errorf("%s changed since it was built (sha256 %s, built %s): another build is running?", p.Binary, sum, o.SHA256)
	}
	version := r.PackageVersion(v)
	names := NamesFor(r, version)
	dir := Dir(m, r)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Half-written artifacts of killed runs (never in SHA256SUMS: their
	// names start with a dot).
	cleanStale(dir, ".*.tmp-*", ".deb-stage-*")
	set, mods, shimMods, err := patchesAndModules(ctx, m, r, v, p)
	if err != nil {
		return nil, err
	}
	var shimSum string
	if HasShim(r) {
		if shimSum, err = checksums.SHA256(shimBinary(p)); err != nil {
			return nil, err
		}
	}
	res := &Result{Dir: dir, Version: version, Modules: len(mods), Patches: len(set.Patches)}
	var mu sync.Mutex
	step := func(name string, fn func(dst string) error) func() error {
		return func() error {
			start := time.Now()
			dst := filepath.Join(dir, name)
			if err := fn(dst); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			mu.Lock()
			defer mu.Unlock()
			res.Artifacts = append(res.Artifacts, Artifact{Name: name, Path: dst, Took: time.Since(start)})
			fmt.Fprintf(o.Log, "    wrote %s (%s)\n", name, time.Since(start).Round(100*time.Millisecond))
			return nil
		}
	}
	writeSBOM := func(binary, sum string, mods []sbom.Module) func(dst string) error {
		return func(dst string) error {
			doc, err := sbom.Generate(sbom.Input{Release: r, Variant: v, Version: version, Binary: binary, BinarySHA256: sum, Tree: p.Tree, Modules: mods, Patches: set.Patches, PatchDir: patchDir})
			if err != nil {
				return err
			}
			data, err := sbom.Marshal(doc)
			if err != nil {
				return err
			}
			if _, err := sbom.Validate(data, mods, sbom.PatchedModules(set.Patches, mods, p.Tree)); err != nil {
				return err
			}
			return fsutil.WriteFileAtomic(dst, data, 0o644)
		}
	}
	// Two at a time for two cores, the longest first: the distributions'
	// packages (a restored tree of their own, then rpmbuild's go build;
	// distro.go), then dpkg-deb's single-threaded xz. The first failure
	// cancels the rest.
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(2)
	steps := []func() error{
		func() error {
			arts, err := distroPackages(ctx, o, dir, version, sum, shimSum, set)
			mu.Lock()
			defer mu.Unlock()
			res.Artifacts = append(res.Artifacts, arts...)
			return err
		},
		step(names.Deb, func(dst string) error {
			return deb.Build(ctx, deb.Options{Release: r, Variant: v, Version: version, Binary: p.Binary, SHA256: sum, Out: dst})
		}),
		step(names.SourceTarball, func(dst string) error {
			t, err := sourceTarball(r, v, p, names, sum, shimSum)
			if err != nil {
				return err
			}
			return t.Write(dst, r.BuildDate)
		}),
		step(names.BinaryTarball, func(dst string) error {
			t, err := binaryTarball(p, names, set)
			if err != nil {
				return err
			}
			return t.Write(dst, r.BuildDate)
		}),
		step(names.SBOM, writeSBOM("kubelet", sum, mods)),
	}
	if HasShim(r) {
		steps = append(steps,
			step(names.ShimDeb, func(dst string) error {
				return deb.BuildShim(ctx, deb.Options{Release: r, Variant: v, Version: version, Binary: shimBinary(p), SHA256: shimSum, Out: dst})
			}),
			step(names.ShimSBOM, writeSBOM(deb.ShimPackage, shimSum, shimMods)))
	}
	for _, f := range steps {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return f()
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	sort.Slice(res.Artifacts, func(i, j int) bool { return res.Artifacts[i].Name < res.Artifacts[j].Name })
	for i := range res.Artifacts {
		a := &res.Artifacts[i]
		fi, err := os.Stat(a.Path)
		if err != nil {
			return nil, err
		}
		a.Size = fi.Size()
		if a.SHA256, err = checksums.SHA256(a.Path); err != nil {
			return nil, err
		}
	}
	if err := WriteSums(dir); err != nil {
		return nil, err
	}
	return res, nil
}

// binaryTarball holds kubelet (and dockershim), LICENSE and the applied
// series.
func binaryTarball(p build.Paths, n Names, set *quilt.Set) (*Tarball, error) {
	t := NewTarball()
	top := n.BinaryTop + "/"
	if err := t.Add(Entry{Name: top + "kubelet", Src: p.Binary, Exec: true}); err != nil {
		return nil, err
	}
	if n.ShimDeb != "" {
		if err := t.Add(Entry{Name: top + deb.ShimPackage, Src: shimBinary(p), Exec: true}); err != nil {
			return nil, err
		}
	}
	if err := t.Add(Entry{Name: top + "LICENSE", Src: filepath.Join(p.Tree, "LICENSE")}); err != nil {
		return nil, err
	}
	if err := t.Add(Entry{Name: top + patchDir, Dir: true}); err != nil {
		return nil, err
	}
	if len(set.Patches) > 0 {
		if err := t.Add(Entry{Name: top + patchDir + "/series", Data: set.SeriesFile()}); err != nil {
			return nil, err
		}
	}
	for _, pt := range set.Patches {
		if err := t.Add(Entry{Name: top + patchDir + "/" + pt.Name, Data: pt.Data}); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// sourceTarball holds the built tree under src/k8s.io/kubernetes with
// BUILD.md and build.sh at the top; sum and shimSum are the binaries'
// (shimSum "" for a release without dockershim).
func sourceTarball(r *matrix.Release, v matrix.Variant, p build.Paths, n Names, sum, shimSum string) (*Tarball, error) {
	t := NewTarball()
	top := n.SourceTop + "/"
	if err := t.Add(Entry{Name: top + "BUILD.md", Data: []byte(buildDoc(r, v, r.PackageVersion(v), sum, shimSum, r.Series.For(v)))}); err != nil {
		return nil, err
	}
	if err := t.Add(Entry{Name: top + "build.sh", Data: []byte(buildScript(r, v)), Exec: true}); err != nil {
		return nil, err
	}
	if r.CGO {
		// The C toolchain as fetched and verified (build.sh checks it again).
		if err := t.Add(Entry{Name: top + r.CToolchain.Tarball(), Src: ctoolchain.Tarball(p.CToolchain, r.CToolchain)}); err != nil {
			return nil, err
		}
	}
	return t, t.AddTree(top+treeInSource, p.Tree, nil)
}

// WriteSums writes SHA256SUMS for every artifact in dir.
func WriteSums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	sums := checksums.File{}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == SumsFile || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if sums[e.Name()], err = checksums.SHA256(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, SumsFile), sums.Lines(), 0o644)
}

// ReadSums reads dir's SHA256SUMS.
func ReadSums(dir string) (checksums.File, error) {
	path := filepath.Join(dir, SumsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return checksums.Parse(data, path)
}

// patchesAndModules are what the artifacts of a release+variant carry:
// its series exported as quilt patches, and the modules its kubelet and,
// for a release with a shim, its dockershim link (read from the built
// binaries, the tree and the lock; shimMods nil without a shim).
func patchesAndModules(ctx context.Context, m *matrix.Matrix, r *matrix.Release, v matrix.Variant, p build.Paths) (set *quilt.Set, mods, shimMods []sbom.Module, err error) {
	if set, err = quilt.Export(m.Root, r, v); err != nil {
		return nil, nil, nil, err
	}
	l, err := lock.Load(filepath.Join(m.Root, r.Lock()))
	if err != nil {
		return nil, nil, nil, err
	}
	if mods, err = sbom.Modules(ctx, r, v, p, l); err != nil {
		return nil, nil, nil, err
	}
	if HasShim(r) {
		shim := p
		shim.Binary = shimBinary(p)
		if shimMods, err = sbom.Modules(ctx, r, v, shim, l); err != nil {
			return nil, nil, nil, err
		}
	}
	return set, mods, shimMods, nil
}
