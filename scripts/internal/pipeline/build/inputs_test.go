package build

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/scripts/internal/pipeline/patch"
)

// The checkout the tests run in, and the same checkout through a
// symlink: another path, as a clean clone elsewhere would have.
func checkouts(t *testing.T) (*matrix.Matrix, *matrix.Matrix) {
	t.Helper()
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(root, other); err != nil {
		t.Fatal(err)
	}
	a, err := matrix.Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := matrix.Load(filepath.Join(other, "versions.yaml"), other)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func TestInputsIndependentOfCheckoutPath(t *testing.T) {
	a, b := checkouts(t)
	da, err := DriverDigest(a.Root)
	if err != nil {
		t.Fatal(err)
	}
	db, err := DriverDigest(b.Root)
	if err != nil {
		t.Fatal(err)
	}
	if da != db {
		t.Fatalf("the driver's digest depends on the checkout's path: %s, %s", da, db)
	}
	for _, name := range []string{"1.9.11", "1.23.17"} {
		ra, _ := a.Lookup(name)
		rb, _ := b.Lookup(name)
		oa := Options{Matrix: a, Release: ra, Variant: matrix.Patched}
		ob := Options{Matrix: b, Release: rb, Variant: matrix.Patched}
		ta, tb := Targets(t.Context(), oa), Targets(t.Context(), ob)
		for i := range ta {
			ia, err := InputsOf(oa, ta[i], da)
			if err != nil {
				t.Fatal(err)
			}
			ib, err := InputsOf(ob, tb[i], db)
			if err != nil {
				t.Fatal(err)
			}
			if d := ia.Differ(ib); len(d) > 0 {
				t.Errorf("%s: the inputs depend on the checkout's path: %v", TargetKey(ra, ta[i]), d)
			}
			// The build line holds the output's paths: they are what
			// the placeholders replace.
			if !strings.Contains(strings.Join(ta[i].Outputs[0].Env, " ")+ta[i].Outputs[0].Dir, a.Root) {
				t.Errorf("%s: no path of the checkout in its build line: the test shows nothing", TargetKey(ra, ta[i]))
			}
		}
	}
}

func TestInputsFollowWhatDecidesBytes(t *testing.T) {
	a, _ := checkouts(t)
	r, _ := a.Lookup("1.9.11")
	o := Options{Matrix: a, Release: r, Variant: matrix.Patched}
	base, err := InputsOf(o, KubeletTarget(o), "sha256:driver")
	if err != nil {
		t.Fatal(err)
	}
	names := func(in checksums.Inputs) []string {
		var out []string
		for _, i := range in {
			out = append(out, i.Name)
		}
		return out
	}
	// One input per series, in application order.
	want := []string{"source", "lock"}
	for i, s := range r.Series.For(matrix.Patched) {
		want = append(want, fmt.Sprintf("series.%d.%s", i+1, s))
	}
	want = append(want, "build", "driver")
	if got := names(base); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("inputs %v, want %v", got, want)
	}
	// The vanilla variant applies other series and stamps another version.
	ov := o
	ov.Variant = matrix.Vanilla
	van, err := InputsOf(ov, KubeletTarget(ov), "sha256:driver")
	if err != nil {
		t.Fatal(err)
	}
	if d := van.Differ(base); !slices.Contains(d, "build") {
		t.Errorf("vanilla against patched differ in %v, want the build line among them", d)
	}
	// Another driver, another module sum: named.
	other, _ := InputsOf(o, KubeletTarget(o), "sha256:other")
	if d := other.Differ(base); strings.Join(d, " ") != "driver" {
		t.Errorf("another driver differs in %v", d)
	}
	r2 := *r
	r2.ModuleSum = "h1:other"
	o2 := o
	o2.Release = &r2
	if in, _ := InputsOf(o2, KubeletTarget(o2), "sha256:driver"); strings.Join(in.Differ(base), " ") != "source" {
		t.Errorf("another module sum differs in %v", in.Differ(base))
	}
}

// A patch's header (why, upstream, when to drop) decides no byte; its
// diff does.
func TestSeriesDigestCoversDiffsNotHeaders(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "patches", "s")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "0001-x.patch")
	write := func(header, diff string) string {
		t.Helper()
		body := "From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n" + header + "\n---\n a | 1 +\n\ndiff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1,2 @@\n a\n+" + diff + "\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := seriesDigest(root, &patch.Series{Name: "s", Patches: []string{p}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := write("Why: one reason.", "b")
	if d := write("Why: a better reason.", "b"); d != base {
		t.Error("a header edit changed the series' digest")
	}
	if d := write("Why: one reason.", "c"); d == base {
		t.Error("a diff edit left the series' digest as it was")
	}
}

func TestDriverDigestFollowsTheDriversCode(t *testing.T) {
	root := t.TempDir()
	for _, pkg := range driverPackages {
		if err := os.MkdirAll(filepath.Join(root, pkg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pkg, "a.go"), []byte("package a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, err := DriverDigest(root)
	if err != nil {
		t.Fatal(err)
	}
	test := filepath.Join(root, driverPackages[0], "a_test.go")
	if err := os.WriteFile(test, []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, _ := DriverDigest(root); d != base {
		t.Error("a test file changed the driver's digest")
	}
	if err := os.WriteFile(filepath.Join(root, driverPackages[3], "a.go"), []byte("package a // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, _ := DriverDigest(root); d == base {
		t.Error("a change to the driver's code left its digest as it was")
	}
	os.RemoveAll(filepath.Join(root, driverPackages[1]))
	if _, err := DriverDigest(root); err == nil {
		t.Error("a driver package gone went unnoticed")
	}
}

// A release without its lock (a stand-in's, whose module is not served
// here) is refused naming the lock, how to write it and the stand-in. The
// checkout is a farm of links to this one's files, its lock left out.
func TestInputsOfAReleaseWithoutLockSayWhatToDo(t *testing.T) {
	real, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	link := func(dir string) {
		entries, err := os.ReadDir(filepath.Join(real, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() == "locks" && dir == "." || dir == "locks" && e.Name() == "1.9.11.yaml" {
				continue
			}
			if err := os.Symlink(filepath.Join(real, dir, e.Name()), filepath.Join(root, dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	link(".")
	if err := os.Mkdir(filepath.Join(root, "locks"), 0o755); err != nil {
		t.Fatal(err)
	}
	link("locks")
	m, err := matrix.Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := m.Lookup("1.9.11")
	r.StandIn = "1.9.10"
	o := Options{Matrix: m, Release: r, Variant: matrix.Patched}
	_, err = InputsOf(o, Targets(t.Context(), o)[0], "sha256:x")
	if err == nil || !strings.Contains(err.Error(), "no dependency lock locks/1.9.11.yaml: make lock VERSION=1.9.11") || !strings.Contains(err.Error(), "stand-in 1.9.10") {
		t.Errorf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(real, "locks", "1.9.11.yaml")); err != nil {
		t.Errorf("the checkout's own lock: %v", err)
	}
}
