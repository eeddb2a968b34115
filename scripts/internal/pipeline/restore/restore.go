// Package restore rebuilds the vendor/ directory that module zips leave
// out, from the release's committed lock, so the tree builds offline.
package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/pipeline/godeps"
	"kubelet-toolchain/scripts/internal/pipeline/gomod"
	"kubelet-toolchain/scripts/internal/pipeline/lock"
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
	// A few go commands at a time, each fetching a batch of modules (the go
	// command downloads a batch in parallel and locks the module cache
	// itself); the first failure cancels the rest.
	total := len(l.Modules)
	var mu sync.Mutex
	done := 0
	vendored := func(m lock.Module) {
		mu.Lock()
		defer mu.Unlock()
		done++
		if progress != nil {
			progress(done, total, m.ID())
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelBatches)
	for start := 0; start < total; start += batchSize {
		batch := l.Modules[start:min(start+batchSize, total)]
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err // an earlier batch failed: start no more
			}
			return restoreBatch(ctx, tree, toolchain, batch, vendored)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return linkStaging(tree)
}

// batchSize and parallelBatches bound the go commands: a handful of them
// in flight hides proxy latency and still suits a 2-core machine.
const (
	batchSize       = 24
	parallelBatches = 3
)

// download is gomod.Download; tests replace it.
var download = gomod.Download

// restoreBatch downloads a batch of locked modules with one go command
// (which verifies each against the checksum database), then re-hashes the
// extracted copy of each in the module cache against the lock and vendors
// its packages. Every module that fails is named in the error.
func restoreBatch(ctx context.Context, tree, toolchain string, batch []lock.Module, vendored func(lock.Module)) error {
	var ids []string
	seen := map[string]bool{}
	for _, m := range batch {
		if !seen[m.ID()] {
			seen[m.ID()] = true
			ids = append(ids, m.ID())
		}
	}
	mods, err := download(ctx, toolchain, ids...)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", strings.Join(ids, " "), err)
	}
	got := map[string]gomod.Module{}
	for _, m := range mods {
		got[m.ID()] = m
	}
	var errs []error
	for _, m := range batch {
		if err := restoreModule(tree, m, got[m.ID()]); err != nil {
			errs = append(errs, err)
		} else {
			vendored(m)
		}
	}
	return errors.Join(errs...)
}

// restoreModule checks one downloaded module against the lock and
// vendors its packages.
func restoreModule(tree string, m lock.Module, got gomod.Module) error {
	switch {
	case got.Path == "":
		return fmt.Errorf("locked module %s (for %s): go mod download said nothing about it", m.ID(), m.Root)
	case got.Error != "":
		return fmt.Errorf("locked module %s (for %s): %s", m.ID(), m.Root, got.Error)
	case got.Sum != m.Sum:
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
	if err := l.GoMod.Apply(tree); err != nil {
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
	if err := gomod.Vendor(ctx, tree, toolchain); err != nil {
		return err
	}
	got, err := os.ReadFile(sumPath)
	if err != nil {
		return err
	}
	if added := gomod.AddedLines(want, got); len(added) > 0 {
		return fmt.Errorf("the lock lacks %d go.sum lines the build needs (run make lock):\n  %s", len(added), strings.Join(added, "\n  "))
	}
	return nil
}
