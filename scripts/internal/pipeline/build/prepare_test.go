package build

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/base/testfile"
	"kubelet-toolchain/scripts/internal/pipeline/source"
)

// fakeRelease is a tiny modules-era "Kubernetes" that builds offline: a
// module zip of k8s.io/kubernetes with a cmd/kubelet and no dependencies,
// pinned by its sum, a lock, and an overlay fixes series.
func fakeRelease(t *testing.T) (*matrix.Matrix, *matrix.Release, string) {
	t.Helper()
	src := t.TempDir()
	testfile.Write(t, filepath.Join(src, "go.mod"), "module k8s.io/kubernetes\n\ngo 1.26\n")
	testfile.Write(t, filepath.Join(src, "go.sum"), "")
	// It reports the version the build stamps (the driver runs it to check).
	testfile.Write(t, filepath.Join(src, "cmd", "kubelet", "kubelet.go"), "package main\n\nfunc main() { println(`version.Info{GitVersion:\"v1.99.0+patched.x-fixes\", GitCommit:\"\"}`) }\n")
	testfile.Write(t, filepath.Join(src, "build", "build-image", "cross", "VERSION"), "v1.99.1-1\n")
	// Its official build: a static kubelet, tags selinux (as 1.18's gotags).
	testfile.Write(t, filepath.Join(src, "hack", "lib", "golang.sh"), "readonly KUBE_STATIC_LIBRARIES=(\n  kube-apiserver\n  kube-controller-manager\n  kube-scheduler\n  kube-proxy\n  kubectl\n  kubelet\n)\n"+
		`IFS=" " read -ra KUBE_CGO_OVERRIDES <<< "${KUBE_CGO_OVERRIDES:-}"`+"\n"+
		`    gotags="selinux,$(echo "${GOFLAGS:-}" | sed -e 's|.*-tags=\([^-]*\).*|\1|')"`+"\n"+
		`      -tags "${gotags:-}"`+"\n")
	zipPath := filepath.Join(t.TempDir(), "v1.99.0.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.CreateFromDir(f, module.Version{Path: source.ModulePath, Version: "v1.99.0"}, src); err != nil {
		t.Fatal(err)
	}
	f.Close()
	sum, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	testfile.Write(t, filepath.Join(root, "locks", "1.99.0.yaml"), "release: 1.99.0\nera: modules\ngoMod:\n  stagingVersion: v0.99.0\n")
	testfile.Write(t, filepath.Join(root, "overlay", "x-fixes", "pkg", "fix", "fix.go"), "package fix\n")
	for _, pkg := range driverPackages { // the driver's code, one of every target's inputs
		testfile.Write(t, filepath.Join(root, pkg, "driver.go"), "package driver\n")
	}
	r := &matrix.Release{Release: "1.99.0", ModuleSum: sum, BuildDate: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), Era: matrix.EraModules, Go: runtime.Version(),
		OfficialGo: "go1.99.1", Tags: []string{"selinux"}, Series: matrix.Series{Fixes: "x-fixes"}, PauseImage: "pause"}
	return &matrix.Matrix{Root: root, File: "versions.yaml", Releases: []matrix.Release{*r}}, r, zipPath
}

func stageNames(res *Result) string {
	var names []string
	for _, s := range res.Stages {
		names = append(names, s.Stage)
	}
	return strings.Join(names, " ")
}

// The whole build, offline: prepared in a temporary gopath that is swapped
// in with its marker, compiled, checksummed; a no-op when nothing changed;
// prepared again when the marker is missing.
func TestRunPreparesSwapsAndMarks(t *testing.T) {
	m, r, zip := fakeRelease(t)
	o := Options{Matrix: m, Release: r, Variant: matrix.Patched, SourceZip: zip, OutputDir: t.TempDir(), Log: io.Discard}
	p := PathsFor(o.OutputDir, r.Release, o.Variant)
	stale := filepath.Join(p.Dir, ".gopath.tmp-killed")
	testfile.Write(t, filepath.Join(stale, "src", "half-done"), "")

	res, err := Kubelet(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := stageNames(res); got != "fetch restore patch compile checksum" || res.UpToDate {
		t.Errorf("first run: stages %q, up to date %v", got, res.UpToDate)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temporary tree left: %v", err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(p.Dir, ".gopath.tmp-*")); len(tmps) > 0 {
		t.Errorf("temporary trees left: %v", tmps)
	}
	if _, err := os.Stat(filepath.Join(p.Tree, "pkg", "fix", "fix.go")); err != nil {
		t.Errorf("fixes series not in the tree: %v", err)
	}
	// The inputs the binary was built from, beside it, as InputsOf says.
	built, err := BuiltInputs(r, KubeletTarget(o))
	if err != nil {
		t.Fatal(err)
	}
	driver, _ := DriverDigest(m.Root)
	if now, _ := InputsOf(o, KubeletTarget(o), driver); len(built) == 0 || !now.Equal(built) {
		t.Errorf("recorded inputs %v, InputsOf %v", built, now)
	}
	marker, err := os.ReadFile(filepath.Join(p.GOPATH, preparedMarker))
	if err != nil || len(strings.TrimSpace(string(marker))) != 64 {
		t.Errorf("prepared marker %q: %v", marker, err)
	}
	if sum, _ := os.ReadFile(p.Binary + ".sha256"); string(sum) != res.SHA256["kubelet"]+"  kubelet\n" {
		t.Errorf("sha256 file %q, build says %s", sum, res.SHA256)
	}

	again, err := Kubelet(context.Background(), o)
	if err != nil || !again.UpToDate || again.SHA256["kubelet"] != res.SHA256["kubelet"] {
		t.Fatalf("second run: %+v, %v", again, err)
	}

	// A tree without its marker is not trusted: prepared again.
	os.Remove(filepath.Join(p.GOPATH, preparedMarker))
	third, err := Kubelet(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := stageNames(third); !strings.HasPrefix(got, "fetch ") {
		t.Errorf("unmarked tree reused: stages %q", got)
	}
	if third.SHA256["kubelet"] != res.SHA256["kubelet"] {
		t.Errorf("rebuild is not reproducible: %s then %s", res.SHA256, third.SHA256)
	}
}

func prepOptions(t *testing.T) (Options, *Target) {
	o := Options{Release: &matrix.Release{Release: "1.99.0"}, Variant: matrix.Vanilla, Log: io.Discard}
	p := PathsFor(t.TempDir(), "1.99.0", matrix.Vanilla)
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return o, &Target{Name: "vanilla", Paths: p}
}

// markerIn reports whether a prepared marker exists in any gopath under dir.
func markerIn(t *testing.T, dir string) []string {
	found, _ := filepath.Glob(filepath.Join(dir, "*", preparedMarker))
	return found
}

func TestPreparedMarkerWrittenLast(t *testing.T) {
	o, target := prepOptions(t)
	p := target.Paths
	var sawMarker []string
	err := prepareTree(o, target, "fp1", &Result{}, []Step{
		{"fetch", func(tree string) error { testfile.Write(t, filepath.Join(tree, "a.go"), "package a\n"); return nil }},
		{"patch", func(tree string) error {
			// The last stage still runs on an unmarked tree, out of place.
			sawMarker = markerIn(t, p.Dir)
			if _, err := os.Stat(p.GOPATH); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("tree in place before every stage passed")
			}
			return nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sawMarker) > 0 {
		t.Errorf("marker written before the last stage: %v", sawMarker)
	}
	if !markerMatches(filepath.Join(p.GOPATH, preparedMarker), "fp1") {
		t.Error("prepared tree has no marker")
	}
	if _, err := os.Stat(filepath.Join(p.Tree, "a.go")); err != nil {
		t.Error(err)
	}
}

func TestFailedStageLeavesNoTreeAndNoMarker(t *testing.T) {
	o, target := prepOptions(t)
	p := target.Paths
	boom := errors.New("boom")
	stages := []Step{
		{"fetch", func(tree string) error { testfile.Write(t, filepath.Join(tree, "new.go"), "package a\n"); return nil }},
		{"patch", func(string) error { return boom }},
	}
	if err := prepareTree(o, target, "fp", &Result{}, stages); !errors.Is(err, boom) || !strings.Contains(err.Error(), "stage patch") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(p.GOPATH); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed prepare left a tree: %v", err)
	}
	if m := markerIn(t, p.Dir); len(m) > 0 {
		t.Errorf("failed prepare left a marker: %v", m)
	}
	if entries, _ := os.ReadDir(p.Dir); len(entries) > 0 {
		t.Errorf("failed prepare left %v", entries)
	}

	// With an earlier tree in place, a failed prepare leaves it as it was.
	if err := prepareTree(o, target, "old", &Result{}, stages[:1]); err != nil {
		t.Fatal(err)
	}
	if err := prepareTree(o, target, "new", &Result{}, stages); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if !markerMatches(filepath.Join(p.GOPATH, preparedMarker), "old") {
		t.Error("the earlier tree lost its marker")
	}
	if tmps, _ := filepath.Glob(filepath.Join(p.Dir, ".gopath*")); len(tmps) > 0 {
		t.Errorf("left behind: %v", tmps)
	}
}

// Pristine runs a build's fetch and restore into the tree it is given and
// applies no series: the tree the RPM's Source0 and the Debian orig
// tarball carry.
func TestPristineIsFetchAndRestoreOnly(t *testing.T) {
	m, r, zip := fakeRelease(t)
	o := Options{Matrix: m, Release: r, Variant: matrix.Patched, SourceZip: zip, Log: io.Discard}
	tree := filepath.Join(t.TempDir(), "kubernetes-1.99.0")
	if err := Pristine(context.Background(), o, tree); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tree, "cmd", "kubelet", "kubelet.go")); err != nil {
		t.Errorf("upstream file missing: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tree, "pkg", "fix", "fix.go")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the fixes series was applied: %v", err)
	}
	if err := Pristine(context.Background(), o, tree); err == nil {
		t.Error("Pristine into an existing tree succeeded")
	}
}

// A versions.yaml whose officialGo is not the tree's own fails at fetch,
// naming both.
func TestOfficialGoMismatchFailsFetch(t *testing.T) {
	m, r, zip := fakeRelease(t)
	r.OfficialGo = "go1.8.3"
	o := Options{Matrix: m, Release: r, Variant: matrix.Patched, SourceZip: zip, Log: io.Discard}
	err := Pristine(context.Background(), o, filepath.Join(t.TempDir(), "kubernetes-1.99.0"))
	if err == nil || !strings.Contains(err.Error(), "officialGo go1.8.3") || !strings.Contains(err.Error(), "says go1.99.1") || !strings.Contains(err.Error(), "fetch") {
		t.Fatalf("err = %v; want the fetch stage to name versions.yaml's go1.8.3 and the tree's go1.99.1", err)
	}
}

// A versions.yaml whose cgo or tags are not what the tree's official build
// uses fails at fetch, naming both.
func TestOfficialBuildMismatchFailsFetch(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(r *matrix.Release)
		want []string
	}{
		"cgo":       {func(r *matrix.Release) { r.CGO = true }, []string{"cgo: true", "with cgo false"}},
		"tags lost": {func(r *matrix.Release) { r.Tags = nil }, []string{"tags: []", `tags ["selinux"]`}},
	} {
		t.Run(name, func(t *testing.T) {
			m, r, zip := fakeRelease(t)
			tc.edit(r)
			o := Options{Matrix: m, Release: r, Variant: matrix.Patched, SourceZip: zip, Log: io.Discard}
			err := Pristine(context.Background(), o, filepath.Join(t.TempDir(), "kubernetes-1.99.0"))
			for _, w := range append(tc.want, "fetch", "release 1.99.0", "versions.yaml", "hack/lib/golang.sh") {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v; want it to name %q", err, w)
				}
			}
		})
	}
}
