// Package build turns a pinned release into a kubelet binary through an
// ordered list of stages: fetch -> restore -> patch -> compile -> checksum.
// The tree is prepared in a temporary directory and renamed into place
// with a marker written last, so an interrupted run leaves nothing a later
// run could mistake for a finished tree.
package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/checksums"
	"kubelet-toolchain/scripts/internal/execx"
	"kubelet-toolchain/scripts/internal/fsutil"
	"kubelet-toolchain/scripts/internal/lock"
	"kubelet-toolchain/scripts/internal/matrix"
	"kubelet-toolchain/scripts/internal/patch"
	"kubelet-toolchain/scripts/internal/restore"
	"kubelet-toolchain/scripts/internal/source"
)

// Options is one build request.
type Options struct {
	Matrix  *matrix.Matrix
	Release *matrix.Release
	Variant matrix.Variant
	// SourceZip, when set, replaces the download (KUBE_SOURCE_ZIP).
	SourceZip string
	// OutputDir is where trees and binaries go (default <root>/_output).
	OutputDir string
	// Log receives progress lines.
	Log io.Writer
}

// Paths are where one release+variant lives under _output/.
type Paths struct {
	Dir    string // _output/<release>/<variant>
	GOPATH string // Dir/gopath
	Tree   string // GOPATH/src/k8s.io/kubernetes
	Binary string // Dir/bin/linux/amd64/kubelet
}

// PathsFor returns the layout for a release and variant under an output dir.
func PathsFor(output, release string, v matrix.Variant) Paths {
	dir := filepath.Join(output, release, string(v))
	gopath := filepath.Join(dir, "gopath")
	return Paths{
		Dir:    dir,
		GOPATH: gopath,
		Tree:   filepath.Join(gopath, "src", "k8s.io", "kubernetes"),
		Binary: filepath.Join(dir, "bin", "linux", "amd64", "kubelet"),
	}
}

// treeFrom returns the tree path inside a gopath directory.
func treeFrom(gopath string) string { return filepath.Join(gopath, "src", "k8s.io", "kubernetes") }

// Result reports what a build did.
type Result struct {
	Binary string
	SHA256 string
	// Stages holds each stage's wall time in order; a skipped stage is absent.
	Stages []Timing
	// UpToDate is true when nothing needed doing.
	UpToDate bool
}

// Timing is one stage's duration.
type Timing struct {
	Stage    string
	Duration time.Duration
}

const (
	preparedMarker = ".prepared" // in gopath/: fingerprint of the inputs the tree was prepared from
	builtMarker    = ".built"    // in Dir: fingerprint of the inputs the binary was built from
)

// Run builds the kubelet for o, reusing a prepared tree and binary when
// their inputs have not changed.
func Run(ctx context.Context, o Options) (*Result, error) {
	r := o.Release
	if o.OutputDir == "" {
		o.OutputDir = o.Matrix.OutputDir()
	}
	p := PathsFor(o.OutputDir, r.Release, o.Variant)
	series, err := loadSeries(o.Matrix.Root, r, r.Series.For(o.Variant))
	if err != nil {
		return nil, err
	}
	prepFP, err := prepareFingerprint(o, series)
	if err != nil {
		return nil, err
	}
	args, env := CompileCommand(r, o.Variant, p)
	buildFP := hashStrings(prepFP, strings.Join(args, "\x00"), strings.Join(env, "\x00"))

	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return nil, err
	}
	// One build per release+variant at a time; other releases build in parallel.
	unlock, err := lockDir(p.Dir, o.Log)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res := &Result{Binary: p.Binary}
	prepared := markerMatches(filepath.Join(p.GOPATH, preparedMarker), prepFP)
	if sum, ok := upToDate(p, buildFP); ok && prepared {
		res.SHA256, res.UpToDate = sum, true
		return res, nil
	}
	if !prepared {
		if err := prepare(ctx, o, series, p, prepFP, res); err != nil {
			return nil, err
		}
	}
	if err := compile(ctx, o, p, args, env, buildFP, res); err != nil {
		return nil, err
	}
	return res, nil
}

// stage runs fn as a named stage, logging its start, end and time.
func stage(o Options, res *Result, name string, fn func() error) error {
	fmt.Fprintf(o.Log, "==> %s: %s %s (%s)\n", name, o.Release.Release, o.Variant, time.Now().UTC().Format("15:04:05"))
	start := time.Now()
	err := fn()
	d := time.Since(start).Round(100 * time.Millisecond)
	res.Stages = append(res.Stages, Timing{name, d})
	if err != nil {
		return fmt.Errorf("release %s %s: stage %s: %w", o.Release.Release, o.Variant, name, err)
	}
	fmt.Fprintf(o.Log, "    %s done in %s\n", name, d)
	return nil
}

// prepare builds a fresh tree for o: fetch, restore, patch.
func prepare(ctx context.Context, o Options, series []*patch.Series, p Paths, fp string, res *Result) error {
	return prepareTree(o, p, fp, res, append(sourceStages(ctx, o), patchStage(ctx, o, series)))
}

// Pristine fetches the release's source into tree (which must not exist)
// and restores its dependencies, without applying any series: the tree
// every series applies to, which the RPM's Source0 and the Debian orig
// tarball carry. It runs a build's own fetch and restore stages.
func Pristine(ctx context.Context, o Options, tree string) error {
	res := &Result{}
	for _, st := range sourceStages(ctx, o) {
		if err := stage(o, res, st.name, func() error { return st.run(tree) }); err != nil {
			return err
		}
	}
	return nil
}

// sourceStages are fetch and restore: the upstream tree with its
// dependencies, before any series.
func sourceStages(ctx context.Context, o Options) []prepStage {
	r := o.Release
	return []prepStage{
		{"fetch", func(tree string) error {
			zip, err := source.Zip(ctx, r, o.SourceZip)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(tree), 0o755); err != nil {
				return err
			}
			return source.Extract(zip, tree, r)
		}},
		{"restore", func(tree string) error {
			l, err := lock.Load(filepath.Join(o.Matrix.Root, r.Lock()))
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s does not exist yet: run `make lock VERSION=%s` (with KUBE_SOURCE_ZIP=... if the proxy refuses the release)", r.Lock(), r.Release)
			} else if err != nil {
				return err
			}
			if r.Era == matrix.EraModules {
				return restore.Modules(ctx, tree, r.Go, l)
			}
			return restore.Godeps(ctx, tree, r.Go, l, func(done, total int, what string) {
				if done == total || done%10 == 0 || done <= 3 {
					fmt.Fprintf(o.Log, "    [%d/%d] %s\n", done, total, what)
				}
			})
		}},
	}
}

// patchStage applies the series in order.
func patchStage(ctx context.Context, o Options, series []*patch.Series) prepStage {
	return prepStage{"patch", func(tree string) error {
		for _, s := range series {
			results, err := s.Apply(ctx, tree)
			for _, pr := range results {
				fmt.Fprintf(o.Log, "    applied %s/%s\n", s.Name, pr.Patch)
				for _, off := range pr.Offsets {
					fmt.Fprintf(o.Log, "      %s\n", off)
				}
			}
			if err != nil {
				return err
			}
			if s.Overlay != "" {
				fmt.Fprintf(o.Log, "    overlaid overlay/%s\n", s.Name)
			}
		}
		return nil
	}}
}

// prepStage is one named step of preparing a tree.
type prepStage struct {
	name string
	run  func(tree string) error
}

// prepareTree runs stages on a tree in a temporary gopath next to the
// final one, writes the prepared marker once every stage has passed, and
// only then renames the temporary gopath into place. A failed stage leaves
// no tree and no marker behind; temporary trees of killed runs go first.
func prepareTree(o Options, p Paths, fp string, res *Result, stages []prepStage) error {
	cleanStale(p.Dir)
	tmp, err := os.MkdirTemp(p.Dir, ".gopath.tmp-")
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			fsutil.RemoveAll(tmp)
		}
	}()
	for _, st := range stages {
		if err := stage(o, res, st.name, func() error { return st.run(treeFrom(tmp)) }); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, preparedMarker), []byte(fp+"\n"), 0o644); err != nil {
		return err
	}
	if err := fsutil.ReplaceDir(tmp, p.GOPATH); err != nil {
		return err
	}
	keep = true
	return nil
}

// cleanStale removes temporary trees left by runs that were killed; the
// caller holds the directory's lock, so none of them is in use.
func cleanStale(dir string) {
	old, _ := filepath.Glob(filepath.Join(dir, ".gopath.tmp-*"))
	for _, d := range old {
		fsutil.RemoveAll(d)
	}
}

// lockDir takes an exclusive lock on dir/.lock, waiting for another build
// of the same release+variant to finish.
func lockDir(dir string, log io.Writer) (func(), error) {
	return fsutil.Lock(filepath.Join(dir, ".lock"), func() { fmt.Fprintf(log, "waiting for another build in %s\n", dir) })
}

// compile runs go build into a temp file, checksums it, and renames it
// into place; the marker is written last.
func compile(ctx context.Context, o Options, p Paths, args, env []string, fp string, res *Result) error {
	if err := os.MkdirAll(filepath.Dir(p.Binary), 0o755); err != nil {
		return err
	}
	os.Remove(filepath.Join(p.Dir, builtMarker))
	tmp := p.Binary + ".tmp"
	if err := stage(o, res, "compile", func() error {
		_, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: append(args, "-o", tmp, KubeletPackage(o.Release)), Dir: BuildDir(o.Release, p), Env: env})
		return err
	}); err != nil {
		os.Remove(tmp)
		return err
	}
	return stage(o, res, "checksum", func() error {
		if err := CheckGODEBUG(tmp); err != nil {
			return err
		}
		sum, err := checksums.SHA256(tmp)
		if err != nil {
			return err
		}
		if err := os.Rename(tmp, p.Binary); err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(p.Binary+".sha256", []byte(sum+"  kubelet\n"), 0o644); err != nil {
			return err
		}
		res.SHA256 = sum
		return fsutil.WriteFileAtomic(filepath.Join(p.Dir, builtMarker), []byte(fp+" "+sum+"\n"), 0o644)
	})
}

func KubeletPackage(r *matrix.Release) string {
	if r.Era == matrix.EraModules {
		return "./cmd/kubelet"
	}
	return "k8s.io/kubernetes/cmd/kubelet"
}

func BuildDir(r *matrix.Release, p Paths) string {
	if r.Era == matrix.EraModules {
		return p.Tree
	}
	return p.GOPATH
}

// CompileCommand returns the go build arguments (without -o and package)
// and environment for a release: reproducible (-trimpath, empty build id,
// the pinned build date) and stamped the way hack/lib/version.sh stamps.
func CompileCommand(r *matrix.Release, v matrix.Variant, p Paths) (args, env []string) {
	var extra []string
	if v == matrix.Patched && r.HashBaseline != "" {
		extra = append(extra, fmt.Sprintf("-X '%s=%s'", hashBaselineVar, r.HashBaseline))
	}
	if v == matrix.Patched && r.UIDBaseline != "" {
		extra = append(extra, fmt.Sprintf("-X '%s=%s'", uidBaselineVar, r.UIDBaseline))
	}
	return compileCommand(r, versionVars(r, r.GitVersion(v)), extra, r.CGO, p.GOPATH)
}

// compileCommand is CompileCommand for any stamped version and cgo setting.
func compileCommand(r *matrix.Release, vars [][2]string, extra []string, cgoOn bool, gopath string) (args, env []string) {
	var ldflags []string
	for _, pkg := range versionPackages(r) {
		for _, kv := range vars {
			ldflags = append(ldflags, fmt.Sprintf("-X '%s.%s=%s'", pkg, kv[0], kv[1]))
		}
	}
	ldflags = append(ldflags, extra...)
	args = []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w -buildid= " + strings.Join(ldflags, " ")}
	cgo := "0"
	if cgoOn {
		cgo = "1"
	}
	env = []string{"GOTOOLCHAIN=" + r.Go, "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=" + cgo, "GOWORK=off",
		fmt.Sprintf("SOURCE_DATE_EPOCH=%d", r.BuildDate.Unix())}
	if r.Era == matrix.EraModules {
		env = append(env, "GO111MODULE=on", "GOFLAGS=-mod=vendor")
	} else {
		env = append(env, "GO111MODULE=off", "GOFLAGS=", "GOPATH="+gopath)
	}
	return args, env
}

// hashBaselineVar selects the baseline of the legacy container hash patch
// (overlay pkg/kubelet/container/legacyhash); the same path in both eras.
const hashBaselineVar = "k8s.io/kubernetes/pkg/kubelet/container/legacyhash.baseline"

// uidBaselineVar selects the static pod UID baseline (versions.yaml
// uidBaseline) of the static pod identity patch (overlay legacy-types).
const uidBaselineVar = "k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid.baseline"

// versionPackages are the packages hack/lib/version.sh stamps, as import
// paths the linker sees in this era.
func versionPackages(r *matrix.Release) []string {
	if r.Era == matrix.EraModules {
		return []string{"k8s.io/client-go/pkg/version", "k8s.io/component-base/version"}
	}
	return []string{"k8s.io/kubernetes/pkg/version", "k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version"}
}

// VersionVars are the stamped key/value pairs.
func VersionVars(r *matrix.Release, v matrix.Variant) [][2]string {
	return versionVars(r, r.GitVersion(v))
}

func versionVars(r *matrix.Release, gitVersion string) [][2]string {
	major, minor := r.MajorMinor()
	vars := [][2]string{{"buildDate", r.BuildDate.UTC().Format("2006-01-02T15:04:05Z")}}
	if r.GitCommit != "" {
		// "archive": built from a source archive, not a git checkout.
		vars = append(vars, [2]string{"gitCommit", r.GitCommit}, [2]string{"gitTreeState", "archive"})
	}
	return append(vars, [2]string{"gitVersion", gitVersion}, [2]string{"gitMajor", major}, [2]string{"gitMinor", minor})
}

// prepareFingerprint hashes everything the prepared tree depends on.
func prepareFingerprint(o Options, series []*patch.Series) (string, error) {
	entry, _ := json.Marshal(o.Release)
	parts := []string{"prepare-v1", string(entry), o.SourceZip}
	files := []string{filepath.Join(o.Matrix.Root, o.Release.Lock())}
	for _, s := range series {
		f, err := s.Files()
		if err != nil {
			return "", err
		}
		files = append(files, f...)
	}
	for _, f := range files {
		sum, err := checksums.SHA256(f)
		if errors.Is(err, fs.ErrNotExist) {
			sum = "absent" // a missing lock fails in the restore stage
		} else if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(o.Matrix.Root, f)
		parts = append(parts, rel+"="+sum)
	}
	return hashStrings(parts...), nil
}

func hashStrings(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func markerMatches(path, fp string) bool {
	data, err := os.ReadFile(path)
	f := strings.Fields(string(data))
	return err == nil && len(f) > 0 && f[0] == fp
}

// upToDate reports whether the binary was built from these inputs and is
// still the file that was built.
func upToDate(p Paths, fp string) (string, bool) {
	marker := filepath.Join(p.Dir, builtMarker)
	data, err := os.ReadFile(marker)
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(marker); err != nil || treeChangedSince(p.Tree, fi.ModTime()) {
		return "", false
	}
	f := strings.Fields(string(data))
	if len(f) != 2 || f[0] != fp {
		return "", false
	}
	sum, err := checksums.SHA256(p.Binary)
	if err != nil || sum != f[1] {
		return "", false
	}
	return sum, true
}

// treeChangedSince reports whether any file of the prepared tree was
// modified after t: someone is editing the tree by hand (as when working
// on a patch), so go build must run. Stat-ing the tree is cheap next to
// hashing it, which go build does anyway.
func treeChangedSince(tree string, t time.Time) bool {
	changed := false
	errStop := errors.New("stop")
	err := filepath.WalkDir(tree, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() || d.IsDir() {
			if fi, err := d.Info(); err == nil && fi.ModTime().After(t) {
				changed = true
				return errStop
			}
		}
		return nil
	})
	return changed || (err != nil && !errors.Is(err, errStop))
}

// loadSeries loads the named patch series of a release, in order.
func loadSeries(root string, r *matrix.Release, names []string) ([]*patch.Series, error) {
	var series []*patch.Series
	for _, name := range names {
		s, err := patch.Load(root, name)
		if err != nil {
			return nil, fmt.Errorf("release %s: %w", r.Release, err)
		}
		series = append(series, s)
	}
	return series, nil
}
