package restore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"kubelet-toolchain/scripts/internal/base/testfile"
	"kubelet-toolchain/scripts/internal/pipeline/godeps"
	"kubelet-toolchain/scripts/internal/pipeline/gomod"
	"kubelet-toolchain/scripts/internal/pipeline/lock"
)

// fixture is a Godeps-era tree of n vendored repositories, their modules
// as the module cache would hold them, and the lock pinning them.
type fixture struct {
	tree string
	lock *lock.Lock
	mods map[string]gomod.Module // by path@version
}

func newFixture(t *testing.T, n int) *fixture {
	f := &fixture{tree: t.TempDir(), mods: map[string]gomod.Module{}}
	cache := t.TempDir()
	gf := godeps.File{ImportPath: "k8s.io/kubernetes"}
	f.lock = &lock.Lock{Release: "1.9.11", Era: "godeps"}
	for i := range n {
		root := fmt.Sprintf("github.com/o/m%03d", i)
		rev := strings.Repeat(fmt.Sprintf("%x", i%16), 40)
		gf.Deps = append(gf.Deps, godeps.Dep{ImportPath: root + "/pkg", Rev: rev})
		dir := filepath.Join(cache, root+"@v1.0.0")
		testfile.Write(t, filepath.Join(dir, "pkg", "p.go"), "package pkg\n")
		testfile.Write(t, filepath.Join(dir, "pkg", "p_test.go"), "package pkg\n")
		testfile.Write(t, filepath.Join(dir, "LICENSE"), "license\n")
		sum, err := dirhash.HashDir(dir, root+"@v1.0.0", dirhash.Hash1)
		if err != nil {
			t.Fatal(err)
		}
		m := lock.Module{Root: root, Rev: rev, Module: root, Version: "v1.0.0", Sum: sum, Packages: []string{"pkg"}}
		f.lock.Modules = append(f.lock.Modules, m)
		f.mods[m.ID()] = gomod.Module{Path: root, Version: "v1.0.0", Dir: dir, Sum: sum}
	}
	data, _ := json.Marshal(gf)
	testfile.Write(t, filepath.Join(f.tree, "Godeps", "Godeps.json"), string(data))
	testfile.Write(t, filepath.Join(f.tree, "staging", "src", "k8s.io", "api", "doc.go"), "package api\n")
	return f
}

// proxy replaces download for one test: answer gets the ids of each call
// and returns what the go command would.
func proxy(t *testing.T, answer func(ctx context.Context, ids []string) ([]gomod.Module, error)) *[][]string {
	var mu sync.Mutex
	var calls [][]string
	orig := download
	download = func(ctx context.Context, _ string, ids ...string) ([]gomod.Module, error) {
		mu.Lock()
		calls = append(calls, ids)
		mu.Unlock()
		return answer(ctx, ids)
	}
	t.Cleanup(func() { download = orig })
	return &calls
}

// served answers from the fixture, in reverse order (the go command's
// output order is not the arguments').
func (f *fixture) served(_ context.Context, ids []string) ([]gomod.Module, error) {
	var out []gomod.Module
	for _, id := range slices.Backward(ids) {
		out = append(out, f.mods[id])
	}
	return out, nil
}

func TestGodepsBatchesDownloadsAndVendors(t *testing.T) {
	f := newFixture(t, 2*batchSize+5)
	calls := proxy(t, f.served)
	var last, reports int
	err := Godeps(context.Background(), f.tree, "go1.26.8", f.lock, func(done, total int, _ string) {
		last, reports = done, reports+1
		if total != len(f.lock.Modules) {
			t.Errorf("progress total %d", total)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(*calls) != 3 {
		t.Errorf("%d go mod download calls for %d modules, want 3", len(*calls), len(f.lock.Modules))
	}
	asked := map[string]int{}
	for _, ids := range *calls {
		if len(ids) > batchSize {
			t.Errorf("a call asked for %d modules", len(ids))
		}
		for _, id := range ids {
			asked[id]++
		}
	}
	for _, m := range f.lock.Modules {
		if asked[m.ID()] != 1 {
			t.Errorf("%s downloaded %d times", m.ID(), asked[m.ID()])
		}
		v := filepath.Join(f.tree, "vendor", filepath.FromSlash(m.Root))
		for _, want := range []string{"pkg/p.go", "LICENSE"} {
			if _, err := os.Stat(filepath.Join(v, want)); err != nil {
				t.Errorf("not vendored: %v", err)
			}
		}
		if _, err := os.Stat(filepath.Join(v, "pkg", "p_test.go")); err == nil {
			t.Errorf("%s: test file vendored", m.Root)
		}
	}
	if last != len(f.lock.Modules) || reports != len(f.lock.Modules) {
		t.Errorf("progress ended at %d after %d reports", last, reports)
	}
	if _, err := os.Stat(filepath.Join(f.tree, "vendor", "k8s.io", "api", "doc.go")); err != nil {
		t.Errorf("staging not linked: %v", err)
	}
}

// Each module that fails is named, not just the go command.
func TestGodepsNamesEveryFailedModule(t *testing.T) {
	f := newFixture(t, 5)
	refused, tampered := f.lock.Modules[1], f.lock.Modules[3]
	proxy(t, func(ctx context.Context, ids []string) ([]gomod.Module, error) {
		out, _ := f.served(ctx, ids)
		for i := range out {
			switch out[i].Path {
			case refused.Module:
				out[i] = gomod.Module{Path: refused.Module, Version: refused.Version, Error: "not found: 410 Gone"}
			case tampered.Module:
				os.WriteFile(filepath.Join(out[i].Dir, "pkg", "p.go"), []byte("package evil\n"), 0o644)
			}
		}
		return out, nil
	})
	err := Godeps(context.Background(), f.tree, "go1.26.8", f.lock, nil)
	if err == nil {
		t.Fatal("restore with a refused and a tampered module succeeded")
	}
	if !strings.Contains(err.Error(), refused.ID()+" (for "+refused.Root+"): not found: 410 Gone") {
		t.Errorf("refused module not named:\n%v", err)
	}
	if !errors.Is(err, gomod.ErrCorrupt) || !strings.Contains(err.Error(), tampered.ID()) {
		t.Errorf("tampered module not named:\n%v", err)
	}
}

// The first failure cancels the batches in flight and starts no more.
func TestGodepsFirstFailureCancelsTheRest(t *testing.T) {
	f := newFixture(t, 6*batchSize)
	first := f.lock.Modules[0].ID()
	calls := proxy(t, func(ctx context.Context, ids []string) ([]gomod.Module, error) {
		if ids[0] == first {
			return nil, errors.New("proxy unreachable")
		}
		<-ctx.Done() // the others hang until cancelled
		return nil, ctx.Err()
	})
	err := Godeps(context.Background(), f.tree, "go1.26.8", f.lock, nil)
	if err == nil || !strings.Contains(err.Error(), "proxy unreachable") {
		t.Fatalf("err = %v", err)
	}
	if n := len(*calls); n > parallelBatches {
		t.Errorf("%d batches started after the first failure; at most %d may be in flight", n, parallelBatches)
	}
}
