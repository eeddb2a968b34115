// Package build turns a pinned release into binaries. A Target says what to
// compile from a prepared tree (the kubelet; the control plane's commands;
// e2e_node.test) and the driver runs the same stages for every one:
// fetch -> restore -> patch -> generate -> compile -> checksum.
//
// The tree is prepared in a temporary gopath and the binaries are built
// into a temporary directory; each is renamed into place with its marker
// written last, so an interrupted run leaves nothing a later run could
// mistake for a finished tree or a complete set of binaries.
package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/scripts/internal/pipeline/ctoolchain"
	"kubelet-toolchain/scripts/internal/pipeline/glibc"
	"kubelet-toolchain/tools/execx"
)

// Options is one build request.
type Options struct {
	Matrix  *matrix.Matrix
	Release *matrix.Release
	// Variant is the kubelet variant; other targets ignore it.
	Variant matrix.Variant
	// SourceZip, when set, replaces the download (KUBE_SOURCE_ZIP).
	SourceZip string
	// OutputDir is where trees and binaries go (default <root>/_output).
	OutputDir string
	// Log receives progress lines.
	Log io.Writer
}

func (o Options) withDefaults() Options {
	if o.OutputDir == "" {
		o.OutputDir = o.Matrix.OutputDir()
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// Target is one thing the driver builds for a release.
type Target struct {
	// Name is the target's directory under _output/<release>/ (a kubelet
	// variant, control-plane, conformance) and its name in progress lines.
	Name string
	// Series are applied in order after restore.
	Series []string
	// Generate runs after the series: what upstream's build generates and
	// the module zip lacks.
	Generate []Step
	Paths    Paths
	// SumsFile is the sha256sum-format file written into Paths.Bin.
	SumsFile string
	Outputs  []Output
}

// Output is one binary of a target. Every one is checked before it is
// accepted: insecure GODEBUG defaults, the release's tags and cgo in its
// build settings, and no glibc symbol version newer than versions.yaml's
// cToolchain.glibcFloor.
type Output struct {
	Name string // file name in Paths.Bin
	// GoArgs are the go subcommand and its flags before -o (build ..., or
	// test -c ... for a test binary); Package is what they compile.
	GoArgs  []string
	Package string
	Dir     string // where go runs
	Env     []string
	// Check, when set, runs on the built binary before it is accepted.
	Check func(ctx context.Context, path string) error
}

// Step is one named step of preparing a tree.
type Step struct {
	Name string
	Run  func(tree string) error
}

// Paths are where one target of a release lives under _output/.
type Paths struct {
	// CToolchain is where the pinned C toolchain is kept (ctoolchain.Root).
	CToolchain string
	Dir        string // _output/<release>/<target>
	GOPATH     string // Dir/gopath
	Tree       string // GOPATH/src/k8s.io/kubernetes
	Bin        string // the binaries, replaced as a whole by each build
	// Binary is the kubelet (kubelet targets only).
	Binary string
}

// In is the path of a file in Bin.
func (p Paths) In(name string) string { return filepath.Join(p.Bin, name) }

// targetPaths is the layout of a target named name, with its binaries in
// bin (relative to its directory).
func targetPaths(output, release, name, bin string) Paths {
	dir := filepath.Join(output, release, name)
	gopath := filepath.Join(dir, "gopath")
	return Paths{CToolchain: ctoolchain.Root(), Dir: dir, GOPATH: gopath, Tree: treeFrom(gopath), Bin: filepath.Join(dir, filepath.FromSlash(bin))}
}

// treeFrom returns the tree path inside a gopath directory.
func treeFrom(gopath string) string { return filepath.Join(gopath, "src", "k8s.io", "kubernetes") }

// Result reports what a build did.
type Result struct {
	Target *Target
	// SHA256 maps each output's name to its binary's sha256.
	SHA256 map[string]string
	// Stages holds each stage's wall time in order; a skipped stage is absent.
	Stages []Timing
	// UpToDate is true when nothing needed doing.
	UpToDate bool
}

// Path is where output name was built.
func (r *Result) Path(name string) string { return r.Target.Paths.In(name) }

// Timing is one stage's duration.
type Timing struct {
	Stage    string
	Duration time.Duration
}

const (
	preparedMarker = ".prepared" // in gopath/: fingerprint of the inputs the tree was prepared from
	builtMarker    = ".built"    // in Bin: fingerprint of the inputs the binaries were built from
	// InputsFile, in Bin, records the target's inputs (InputsOf) as
	// make update-checksums copies them into CHECKSUMS.inputs.
	InputsFile = ".inputs"
)

// Run builds t for o.Release, reusing the prepared tree and the binaries
// when their inputs have not changed.
func Run(ctx context.Context, o Options, t *Target) (*Result, error) {
	o = o.withDefaults()
	r, p := o.Release, t.Paths
	series, err := loadSeries(o.Matrix.Root, r, t.Series)
	if err != nil {
		return nil, err
	}
	driver, err := DriverDigest(o.Matrix.Root)
	if err != nil {
		return nil, err
	}
	inputs, err := InputsOf(o, t, driver)
	if err != nil {
		return nil, err
	}
	prepFP, err := prepareFingerprint(o, t, series, driver)
	if err != nil {
		return nil, err
	}
	buildFP := buildFingerprint(prepFP, t)
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return nil, err
	}
	// One build per release and target at a time; others build in parallel.
	unlock, err := fsutil.Lock(filepath.Join(p.Dir, ".lock"), func() { fmt.Fprintf(o.Log, "waiting for another build in %s\n", p.Dir) })
	if err != nil {
		return nil, err
	}
	defer unlock()
	res := &Result{Target: t}
	prepared := markerMatches(filepath.Join(p.GOPATH, preparedMarker), prepFP)
	if sums, ok := upToDate(t, buildFP); ok && prepared {
		res.SHA256, res.UpToDate = sums, true
		return res, nil
	}
	if !prepared {
		stages := append(sourceStages(ctx, o), patchStage(ctx, o, series))
		if err := prepareTree(o, t, prepFP, res, append(stages, t.Generate...)); err != nil {
			return nil, err
		}
	}
	if err := compile(ctx, o, t, buildFP, inputs.Lines(TargetKey(r, t)), res); err != nil {
		return nil, err
	}
	return res, nil
}

// stage runs fn as a named stage of target, logging its start, end and time.
func stage(o Options, target string, res *Result, name string, fn func() error) error {
	fmt.Fprintf(o.Log, "==> %s: %s %s (%s)\n", name, o.Release.Release, target, time.Now().UTC().Format("15:04:05"))
	start := time.Now()
	err := fn()
	d := time.Since(start).Round(100 * time.Millisecond)
	res.Stages = append(res.Stages, Timing{name, d})
	if err != nil {
		return fmt.Errorf("release %s %s: stage %s: %w", o.Release.Release, target, name, err)
	}
	fmt.Fprintf(o.Log, "    %s done in %s\n", name, d)
	return nil
}

// compile builds every output into a temporary directory next to Bin
// (stage compile), checks each, then writes the checksum file and the
// built marker into it and moves it into place as a whole (stage
// checksum): a killed or failed run leaves the previous complete set or
// none, never a mix.
func compile(ctx context.Context, o Options, t *Target, fp string, inputs []byte, res *Result) error {
	p := t.Paths
	parent := filepath.Dir(p.Bin)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(parent, ".bin.tmp-*"))
	for _, d := range old {
		fsutil.RemoveAll(d)
	}
	tmp, err := os.MkdirTemp(parent, ".bin.tmp-")
	if err != nil {
		return err
	}
	defer fsutil.RemoveAll(tmp)                  // gone after the rename; only a failure leaves it to remove
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return err
	}
	sums := checksums.File{}
	err = stage(o, t.Name, res, "compile", func() error {
		for _, out := range t.Outputs {
			start := time.Now()
			bin := filepath.Join(tmp, out.Name)
			if err := EnsureCToolchain(ctx, o.Release, p, out.Env, o.Log); err != nil {
				return err
			}
			args := append(append([]string{}, out.GoArgs...), "-o", bin, out.Package)
			if _, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: args, Dir: out.Dir, Env: out.Env}); err != nil {
				return fmt.Errorf("%s: %w", out.Name, err)
			}
			if err := CheckGODEBUG(bin); err != nil {
				return err
			}
			if err := CheckBuildSettings(bin, o.Release, UsesCToolchain(out.Env)); err != nil {
				return err
			}
			// Every binary starts on the oldest glibc the field runs.
			if err := glibc.CheckFloor(bin, o.Release.CToolchain.GlibcFloor); err != nil {
				return fmt.Errorf("%s: %w", out.Name, err)
			}
			if out.Check != nil {
				if err := out.Check(ctx, bin); err != nil {
					return err
				}
			}
			fi, err := os.Stat(bin)
			if err != nil {
				return err
			}
			fmt.Fprintf(o.Log, "    %s %.1f MB in %s\n", out.Name, float64(fi.Size())/1e6, time.Since(start).Round(100*time.Millisecond))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return stage(o, t.Name, res, "checksum", func() error {
		for _, out := range t.Outputs {
			sum, err := checksums.SHA256(filepath.Join(tmp, out.Name))
			if err != nil {
				return err
			}
			sums[out.Name] = sum
		}
		if err := os.WriteFile(filepath.Join(tmp, t.SumsFile), sums.Lines(), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, InputsFile), inputs, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, builtMarker), []byte(fp+"\n"), 0o644); err != nil {
			return err
		}
		if err := fsutil.ReplaceDir(tmp, p.Bin); err != nil {
			return err
		}
		res.SHA256 = sums
		return nil
	})
}

// upToDate reports whether Bin was built from these inputs, is complete
// and unchanged, and the tree was not edited since.
func upToDate(t *Target, fp string) (map[string]string, bool) {
	marker := filepath.Join(t.Paths.Bin, builtMarker)
	if !markerMatches(marker, fp) {
		return nil, false
	}
	if fi, err := os.Stat(marker); err != nil || treeChangedSince(t.Paths.Tree, fi.ModTime()) {
		return nil, false
	}
	if _, err := os.Stat(filepath.Join(t.Paths.Bin, InputsFile)); err != nil {
		return nil, false
	}
	want, err := checksums.Load(t.Paths.In(t.SumsFile))
	if err != nil || len(want) != len(t.Outputs) {
		return nil, false
	}
	for _, out := range t.Outputs {
		sum, err := checksums.SHA256(t.Paths.In(out.Name))
		if err != nil || sum != want[out.Name] {
			return nil, false
		}
	}
	return want, true
}

// buildFingerprint hashes what the binaries depend on beyond the tree.
func buildFingerprint(prepFP string, t *Target) string {
	parts := []string{prepFP, "build-v3", t.SumsFile}
	for _, out := range t.Outputs {
		parts = append(parts, out.Name, strings.Join(out.GoArgs, "\x00"), out.Package, out.Dir, strings.Join(out.Env, "\x00"))
	}
	return hashStrings(parts...)
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

// Targets lists every target of o's release: each kubelet variant, then
// the control plane and the node conformance suite when the release has them.
func Targets(ctx context.Context, o Options) []*Target {
	var out []*Target
	for _, v := range matrix.Variants {
		o.Variant = v
		out = append(out, KubeletTarget(o))
	}
	if ControlPlaneSupported(o.Matrix, o.Release) == nil {
		out = append(out, ControlPlaneTarget(ctx, o))
	}
	if ConformanceSupported(o.Matrix, o.Release) == nil {
		out = append(out, ConformanceTarget(ctx, o))
	}
	return out
}
