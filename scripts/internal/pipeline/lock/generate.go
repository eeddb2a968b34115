package lock

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/godeps"
	"kubelet-toolchain/scripts/internal/pipeline/gomod"
	"kubelet-toolchain/scripts/internal/pipeline/source"
)

// Options select the release whose lock is generated or checked.
type Options struct {
	Matrix  *matrix.Matrix
	Release *matrix.Release
	// Seed is a file of candidate pins found by hand (Godeps era).
	Seed string
	// SourceZip, when set, replaces the download of the release.
	SourceZip string
	// Log receives notes.
	Log io.Writer
}

func (o Options) path() string { return filepath.Join(o.Matrix.Root, o.Release.Lock()) }

// Write regenerates the release's lock from its tree and writes it.
func Write(ctx context.Context, o Options) (*Lock, error) {
	prev, err := Load(o.path())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(o.Log, "note: ignoring unreadable %s: %v\n", o.Release.Lock(), err)
	}
	next, data, err := generate(ctx, o, prev)
	if err != nil {
		return nil, err
	}
	return next, fsutil.WriteFileAtomic(o.path(), data, 0o644)
}

// Check regenerates the release's lock and fails, showing the lines that
// differ, unless it is byte for byte the committed one.
func Check(ctx context.Context, o Options) (*Lock, error) {
	prev, err := Load(o.path())
	if err != nil {
		return nil, err
	}
	next, data, err := generate(ctx, o, prev)
	if err != nil {
		return nil, err
	}
	old, err := os.ReadFile(o.path())
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(old, data) {
		r := o.Release
		return nil, fmt.Errorf("%s is out of date with what the proxy and the tree give now:\n%s\nrun `make lock VERSION=%s` and review the diff", r.Lock(), lineDiff(string(old), string(data)), r.Release)
	}
	return next, nil
}

// Summary counts what the lock holds, for progress lines.
func (l *Lock) Summary() string {
	return fmt.Sprintf("%d modules, %d missing, %d sums", len(l.Modules), len(l.Missing), len(l.Sums))
}

// generate resolves the release's lock afresh from its source zip,
// starting from prev (the committed lock; nil if none).
func generate(ctx context.Context, o Options, prev *Lock) (*Lock, []byte, error) {
	r := o.Release
	zipPath, err := source.Zip(ctx, r, o.SourceZip)
	if err != nil {
		return nil, nil, err
	}
	var next *Lock
	switch r.Era {
	case matrix.EraGodeps:
		next, err = godepsLock(ctx, r, zipPath, prev, siblings(o), o.Seed)
	case matrix.EraModules:
		next, err = modulesLock(ctx, r, zipPath, prev)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("release %s: lock: %w", r.Release, err)
	}
	data, err := next.Marshal()
	return next, data, err
}

// siblings are the committed locks of the matrix's other releases of the
// same era (those that have one).
func siblings(o Options) []*Lock {
	var out []*Lock
	for i := range o.Matrix.Releases {
		r := &o.Matrix.Releases[i]
		if r.Release == o.Release.Release || r.Era != o.Release.Era {
			continue
		}
		if l, err := Load(filepath.Join(o.Matrix.Root, r.Lock())); err == nil {
			out = append(out, l)
		}
	}
	return out
}

func godepsLock(ctx context.Context, r *matrix.Release, zipPath string, prev *Lock, siblings []*Lock, seedPath string) (*Lock, error) {
	data, err := readZipFile(zipPath, source.ModulePath+"@"+r.ModuleVersion()+"/Godeps/Godeps.json")
	if err != nil {
		return nil, err
	}
	var gf godeps.File
	if err := json.Unmarshal(data, &gf); err != nil {
		return nil, fmt.Errorf("Godeps.json: %w", err)
	}
	repos, err := gf.Repos()
	if err != nil {
		return nil, err
	}
	var own []godeps.Repo
	for _, rp := range repos {
		if rp.Root != gf.ImportPath {
			own = append(own, rp)
		}
	}
	var seed []Candidate
	if seedPath != "" {
		if seed, err = LoadSeed(seedPath); err != nil {
			return nil, err
		}
	}
	dl := func(ctx context.Context, ids ...string) ([]gomod.Module, error) {
		return gomod.Download(ctx, r.Go, ids...)
	}
	return Resolve(ctx, r.Release, own, prev, siblings, seed, dl)
}

// modulesLock applies the committed go.mod edits to a scratch tree, lets
// `go mod vendor` fetch what they need (checked by the checksum database)
// and records the go.sum lines that were added.
func modulesLock(ctx context.Context, r *matrix.Release, zipPath string, prev *Lock) (*Lock, error) {
	if prev == nil || prev.GoMod == nil {
		return nil, fmt.Errorf("a modules-era lock starts from its hand-written goMod edits; none found")
	}
	tmp, err := os.MkdirTemp("", "lock-"+r.Release+"-")
	if err != nil {
		return nil, err
	}
	defer fsutil.RemoveAll(tmp)
	tree := filepath.Join(tmp, "kubernetes")
	if err := source.Extract(zipPath, tree, r); err != nil {
		return nil, err
	}
	next := &Lock{Release: r.Release, Era: r.Era, GoMod: prev.GoMod}
	if next.Sums, err = newSums(ctx, tree, r.Go, next.GoMod); err != nil {
		return nil, err
	}
	return next, next.Validate()
}

// newSums applies the go.mod edits to tree, vendors it (the go command
// consults the checksum database for anything go.sum lacks) and returns
// the go.sum lines that were added.
func newSums(ctx context.Context, tree, toolchain string, e *GoModEdits) ([]string, error) {
	if err := e.Apply(tree); err != nil {
		return nil, err
	}
	sumPath := filepath.Join(tree, "go.sum")
	before, err := os.ReadFile(sumPath)
	if err != nil {
		return nil, err
	}
	// go mod vendor fills in go.sum for the modules it walks to, but not for
	// the targets of replacements themselves: ask for those first.
	targets, err := replacementTargets(tree)
	if err != nil {
		return nil, err
	}
	mods, err := gomod.Download(ctx, toolchain, targets...)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, m := range mods {
		if m.Error != "" {
			return nil, fmt.Errorf("%s: %s", m.ID(), m.Error)
		}
		lines = append(lines, m.Path+" "+m.Version+" "+m.Sum, m.Path+" "+m.Version+"/go.mod "+m.GoModSum)
	}
	if err := os.WriteFile(sumPath, append(append([]byte{}, before...), []byte(strings.Join(lines, "\n")+"\n")...), 0o644); err != nil {
		return nil, err
	}
	if err := gomod.Vendor(ctx, tree, toolchain); err != nil {
		return nil, err
	}
	after, err := os.ReadFile(sumPath)
	if err != nil {
		return nil, err
	}
	return gomod.AddedLines(before, after), nil
}

// replacementTargets lists the module@version targets of go.mod's
// replacements that go.sum does not cover yet.
func replacementTargets(tree string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(tree, "go.mod"))
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, err
	}
	sums, err := os.ReadFile(filepath.Join(tree, "go.sum"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range f.Replace {
		if r.New.Version != "" && !strings.Contains(string(sums), r.New.Path+" "+r.New.Version+"/go.mod ") {
			out = append(out, r.New.Path+"@"+r.New.Version)
		}
	}
	return out, nil
}

func readZipFile(zipPath, name string) ([]byte, error) {
	z, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	f, err := z.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", zipPath, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

// lineDiff lists lines only in a (-) or only in b (+).
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !inb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ina[l] {
			out = append(out, "+ "+l)
		}
	}
	if len(out) > 40 {
		out = append(out[:40], fmt.Sprintf("... and %d more lines", len(out)-40))
	}
	return strings.Join(out, "\n")
}
