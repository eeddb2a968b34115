// Package restore rebuilds the vendor/ directory that module zips leave
// out, from the release's committed lock, so the tree builds offline.
package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"

	"kubelet-toolchain/scripts/internal/execx"
	"kubelet-toolchain/scripts/internal/fsutil"
	"kubelet-toolchain/scripts/internal/godeps"
	"kubelet-toolchain/scripts/internal/gomod"
	"kubelet-toolchain/scripts/internal/lock"
)

// Progress reports one step of a long restore ("[37/185] module@version").
type Progress func(done, total int, what string)

// Godeps fills tree/vendor from the lock: every locked module is downloaded
// (verified by the checksum database), its extracted files are hashed
// against the lock's sum, and its packages copied into vendor/<root>.
func Godeps(ctx context.Context, tree, toolchain string, l *lock.Lock, progress Progress) error {
	f, err := godeps.Load(filepath.Join(tree, "Godeps", "Godeps.json"))
	if err != nil {
		return err
	}
	repos, err := f.Repos()
	if err != nil {
		return err
	}
	if err := l.CheckCovers(withoutSelf(repos, f.ImportPath)); err != nil {
		return err
	}
	// One go command per module, a few at a time, so progress can be shown
	// as modules arrive; the go command locks the module cache itself.
	var (
		mu    sync.Mutex
		done  int
		errs  []error
		sem   = make(chan struct{}, parallelDownloads)
		group sync.WaitGroup
	)
	for _, m := range l.Modules {
		group.Add(1)
		go func() {
			defer group.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			err := restoreModule(ctx, tree, toolchain, m)
			mu.Lock()
			defer mu.Unlock()
			done++
			if err != nil {
				errs = append(errs, err)
			} else if progress != nil {
				progress(done, len(l.Modules), m.ID())
			}
		}()
	}
	group.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return linkStaging(tree)
}

// parallelDownloads bounds concurrent go commands: enough to hide proxy
// latency, few enough for a 2-core machine.
const parallelDownloads = 8

// restoreModule downloads one locked module (the go command verifies it
// against the checksum database), re-hashes the extracted copy in the
// module cache against the lock, and vendors its packages.
func restoreModule(ctx context.Context, tree, toolchain string, m lock.Module) error {
	mods, err := gomod.Download(ctx, toolchain, m.ID())
	if err != nil {
		return fmt.Errorf("downloading %s (for %s): %w", m.ID(), m.Root, err)
	}
	got := mods[0]
	if got.Error != "" {
		return fmt.Errorf("locked module %s (for %s): %s", m.ID(), m.Root, got.Error)
	}
	if got.Sum != m.Sum {
		return fmt.Errorf("locked module %s: the checksum database says %s, the lock %s", m.ID(), got.Sum, m.Sum)
	}
	if err := gomod.VerifyDir(got.Dir, m.Module, m.Version, m.Sum); err != nil {
		return err
	}
	if err := vendorModule(tree, got.Dir, m); err != nil {
		return fmt.Errorf("vendoring %s from %s: %w", m.Root, m.ID(), err)
	}
	return nil
}

func withoutSelf(repos []godeps.Repo, self string) []godeps.Repo {
	out := repos[:0:0]
	for _, r := range repos {
		if r.Root != self {
			out = append(out, r)
		}
	}
	return out
}

// vendorModule copies a module's locked packages (or all of it) into
// vendor/<root>, with the licence files at the module root.
func vendorModule(tree, dir string, m lock.Module) error {
	dst := filepath.Join(tree, "vendor", filepath.FromSlash(m.Root))
	if m.WholeModule {
		return fsutil.CopyDir(dir, dst, true, fsutil.IsTestFile)
	}
	for _, p := range m.Packages {
		src := filepath.Join(dir, filepath.FromSlash(p))
		if _, err := os.Stat(src); err != nil {
			return fmt.Errorf("package %s not in %s: %w", p, m.ID(), err)
		}
		if err := fsutil.CopyDir(src, filepath.Join(dst, filepath.FromSlash(p)), false, fsutil.IsTestFile); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if isLicense(e.Name()) && e.Type().IsRegular() {
			if _, err := os.Stat(filepath.Join(dst, e.Name())); err == nil {
				continue
			}
			if err := fsutil.CopyFile(filepath.Join(dir, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func isLicense(name string) bool {
	n := strings.ToUpper(name)
	for _, p := range []string{"LICENSE", "LICENCE", "COPYING", "NOTICE", "PATENTS"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// linkStaging recreates the vendor/k8s.io/<name> -> staging symlinks that
// the upstream repository has and module zips drop.
func linkStaging(tree string) error {
	staging := filepath.Join(tree, "staging", "src", "k8s.io")
	entries, err := os.ReadDir(staging)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(tree, "vendor", "k8s.io"), 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		link := filepath.Join(tree, "vendor", "k8s.io", e.Name())
		if err := os.Symlink(filepath.Join("..", "..", "staging", "src", "k8s.io", e.Name()), link); err != nil {
			return err
		}
	}
	return nil
}

// Modules edits a modules-era go.mod as the lock says (staging replaced by
// the published modules, Go 1.26 pins), adds the locked go.sum lines, and
// runs `go mod vendor`, which verifies every module against go.sum. A sum
// the lock lacks is an error, not something fetched quietly.
func Modules(ctx context.Context, tree, toolchain string, l *lock.Lock) error {
	if err := EditGoMod(tree, l); err != nil {
		return err
	}
	sumPath := filepath.Join(tree, "go.sum")
	sums, err := os.ReadFile(sumPath)
	if err != nil {
		return err
	}
	want := append(sums, []byte(strings.Join(l.Sums, "\n")+"\n")...)
	if err := os.WriteFile(sumPath, want, 0o644); err != nil {
		return err
	}
	if err := vendor(ctx, tree, toolchain); err != nil {
		return err
	}
	got, err := os.ReadFile(sumPath)
	if err != nil {
		return err
	}
	if added := addedLines(want, got); len(added) > 0 {
		return fmt.Errorf("the lock lacks %d go.sum lines the build needs (run make lock):\n  %s", len(added), strings.Join(added, "\n  "))
	}
	return nil
}

// NewSums applies the lock's go.mod edits to tree, vendors it (the go
// command consults the checksum database for anything go.sum lacks) and
// returns the go.sum lines that were added.
func NewSums(ctx context.Context, tree, toolchain string, l *lock.Lock) ([]string, error) {
	if err := EditGoMod(tree, l); err != nil {
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
	if err := vendor(ctx, tree, toolchain); err != nil {
		return nil, err
	}
	after, err := os.ReadFile(sumPath)
	if err != nil {
		return nil, err
	}
	return addedLines(before, after), nil
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

func vendor(ctx context.Context, tree, toolchain string) error {
	_, err := execx.Run(ctx, execx.Cmd{
		Name: "go", Args: []string{"mod", "vendor"}, Dir: tree,
		// -mod=mod lets the go command read the edited go.mod.
		Env: append(gomod.Env(toolchain), "GOFLAGS=-mod=mod"),
	})
	return err
}

// addedLines returns the sorted lines of after that before lacks.
func addedLines(before, after []byte) []string {
	had := map[string]bool{}
	for _, l := range strings.Split(string(before), "\n") {
		had[l] = true
	}
	var out []string
	for _, l := range strings.Split(string(after), "\n") {
		if l != "" && !had[l] {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// EditGoMod applies the lock's go.mod edits to tree/go.mod.
func EditGoMod(tree string, l *lock.Lock) error {
	path := filepath.Join(tree, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		return err
	}
	e := l.GoMod
	drop := map[string]bool{}
	for _, d := range e.Drop {
		drop[d.Path] = true
		if err := f.DropRequire(d.Path); err != nil {
			return err
		}
	}
	var staged []string
	for _, r := range f.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/src/") {
			staged = append(staged, r.Old.Path)
		}
	}
	sort.Strings(staged)
	for _, p := range staged {
		if err := f.DropReplace(p, ""); err != nil {
			return err
		}
		if drop[p] {
			continue
		}
		// The tree requires staging modules at v0.0.0; require and replace
		// with the published version so the module graph is consistent.
		if err := f.AddRequire(p, e.StagingVersion); err != nil {
			return err
		}
		if err := f.AddReplace(p, "", p, e.StagingVersion); err != nil {
			return err
		}
	}
	for _, r := range e.Replace {
		if err := f.AddReplace(r.Path, "", r.With, r.Version); err != nil {
			return err
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
