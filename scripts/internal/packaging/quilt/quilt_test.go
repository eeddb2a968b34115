package quilt

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/base/testfile"
	"kubelet-toolchain/scripts/internal/base/testtool"
	"kubelet-toolchain/scripts/internal/pipeline/patch"
	"kubelet-toolchain/tools/execx"
)

const onePatch = `From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Someone <someone@example.invalid>
Date: Sun, 1 Jan 2023 00:00:00 +0000
Subject: [PATCH] change a

---
 a.txt | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
 one
-two
+TWO
`

// The exported set, applied by patch -p1 in series order, gives the same
// tree as the build's own patch+overlay step.
func TestExportAppliesLikeTheBuild(t *testing.T) {
	testtool.Need(t, "git", "patch")
	root := t.TempDir()
	testfile.Write(t, filepath.Join(root, "patches", "x-build", "0001-change-a.patch"), onePatch)
	testfile.Write(t, filepath.Join(root, "overlay", "x-fixes", "pkg", "new", "new.go"), "package new\n\nconst X = 1\n")
	testfile.Write(t, filepath.Join(root, "overlay", "x-fixes", "vendor", "example.com", "m", "noeol.txt"), "no newline")
	r := &matrix.Release{Release: "1.0.0", BuildDate: time.Unix(0, 0), Series: matrix.Series{Build: "x-build", Fixes: "x-fixes"}}
	if _, err := Export(root, r, matrix.Patched); err == nil || !strings.Contains(err.Error(), "x-fixes.header") {
		t.Fatalf("an overlay without its header exported: %v", err)
	}
	testfile.Write(t, filepath.Join(root, "overlay", "x-fixes.header"), xHeader)
	set, err := Export(root, r, matrix.Patched)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range set.Patches {
		names = append(names, p.Name)
	}
	// One patch per overlay, named for what it adds, not one per file.
	want := []string{"x-build/0001-change-a.patch", "x-fixes/0001-add-package-new-and-a-file-without-a-newline.patch"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("patches %v, want %v", names, want)
	}
	if got := strings.Join(set.Patches[1].Paths, " "); got != "pkg/new/new.go vendor/example.com/m/noeol.txt" {
		t.Errorf("overlay patch paths %v", got)
	}
	// The overlay's header is the patch's message, with every section.
	ov := string(set.Patches[1].Data)
	for _, want := range []string{"Subject: [PATCH] x-fixes: add package new and a file without a newline\n", "\nWhat: package new.\n", "\nDrop: never.\n", "\n 2 files changed, 4 insertions(+)\n"} {
		if !strings.Contains(ov, want) {
			t.Errorf("overlay patch lacks %q:\n%s", want, ov)
		}
	}

	// The build's way.
	built := filepath.Join(t.TempDir(), "tree")
	testfile.Write(t, filepath.Join(built, "a.txt"), "one\ntwo\n")
	for _, name := range set.Series {
		s, err := patch.Load(root, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Apply(context.Background(), built); err != nil {
			t.Fatal(err)
		}
	}
	// The packager's way: quilt's series file, patch -p1.
	out := filepath.Join(t.TempDir(), "export")
	if err := set.Write(out); err != nil {
		t.Fatal(err)
	}
	pk := filepath.Join(t.TempDir(), "tree")
	testfile.Write(t, filepath.Join(pk, "a.txt"), "one\ntwo\n")
	series, _ := os.ReadFile(filepath.Join(out, "series"))
	for _, l := range strings.Split(string(series), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if _, err := execx.Run(context.Background(), execx.Cmd{Name: "patch", Args: []string{"-p1", "--batch", "-i", filepath.Join(out, l)}, Dir: pk}); err != nil {
			t.Fatal(err)
		}
	}
	diff, _ := execx.Run(context.Background(), execx.Cmd{Name: "diff", Args: []string{"-r", built, pk}})
	if len(diff) > 0 {
		t.Errorf("trees differ:\n%s", diff)
	}
	// A second export into the same directory replaces the first.
	if err := set.Write(out); err != nil {
		t.Errorf("re-export: %v", err)
	}
	other := t.TempDir()
	testfile.Write(t, filepath.Join(other, "keep"), "x")
	if err := set.Write(other); err == nil {
		t.Error("export into a non-empty directory without a series file succeeded")
	}
}

const xHeader = `add package new and a file without a newline

What: package new.

Why: a test.

Upstream: not applicable.

Drop: never.
`

func TestAddedFileDiffAppliesWithGit(t *testing.T) {
	testtool.Need(t, "git")
	data := []byte("line\n")
	p, _, err := addedFileDiff("d/f.txt", data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(p, []byte("@@ -0,0 +1 @@\n+line\n")) {
		t.Errorf("patch:\n%s", p)
	}
	dir := t.TempDir()
	testfile.Write(t, filepath.Join(dir, "p.patch"), string(p))
	if _, err := execx.Run(context.Background(), execx.Cmd{Name: "git", Args: []string{"apply", "p.patch"}, Dir: dir, Env: []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "d", "f.txt")); !bytes.Equal(got, data) {
		t.Errorf("git apply wrote %q", got)
	}
	if _, _, err := addedFileDiff("bin", []byte{0, 1}); err == nil {
		t.Error("binary file accepted")
	}
}

func TestSubject(t *testing.T) {
	p := Patch{Data: []byte("From 0000 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nDate: x\nSubject: [PATCH] cadvisor: put a deadline on docker inspect so one hung\n container cannot stall start-up\n\nWhat: Subject: not this\n")}
	if got, want := p.Subject(), "cadvisor: put a deadline on docker inspect so one hung container cannot stall start-up"; got != want {
		t.Errorf("Subject = %q, want %q", got, want)
	}
	added := overlay(t)
	if got := added.Subject(); got != "x: add package new and a file without a newline" {
		t.Errorf("overlay patch's Subject = %q", got)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"add package new": "add-package-new",
		"add older releases' type graphs and go1.8.3 runtime layouts": "add-older-releases-type-graphs-and-go1.8.3-runtime",
		"add the 1.9 fixes' static pod UID code, hash schemas, tests": "add-the-1.9-fixes-static-pod-UID-code-hash-schemas",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSummary(t *testing.T) {
	if got := overlay(t).Summary(); got != "0003 add package new and a file without a newline" {
		t.Errorf("Summary = %q", got)
	}
}

// overlay exports a one-file overlay of series x as patch 0003.
func overlay(t *testing.T) *Patch {
	root := t.TempDir()
	testfile.Write(t, filepath.Join(root, "overlay", "x", "cmd", "x", "y.go"), "package y\n")
	testfile.Write(t, filepath.Join(root, "overlay", "x.header"), xHeader)
	s, err := patch.Load(root, "x")
	if err != nil {
		t.Fatal(err)
	}
	p, err := overlayPatch(s, 3, "A <a@b>", "date")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Every release's exported series, as packagers get it (SRPM PatchN,
// debian/patches): one patch per format-patch file or overlay, each with
// the header every patch carries.
func TestRepositoryExportsOnePatchPerChange(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	m, err := matrix.Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Releases {
		r := &m.Releases[i]
		for _, v := range matrix.Variants {
			set, err := Export(root, r, v)
			if err != nil {
				t.Fatalf("%s %s: %v", r.Release, v, err)
			}
			want := 0
			for _, name := range set.Series {
				s, err := patch.Load(root, name)
				if err != nil {
					t.Fatal(err)
				}
				want += len(s.Patches)
				if s.Overlay != "" {
					want++
				}
			}
			if len(set.Patches) != want {
				t.Errorf("%s %s: %d patches exported, want %d (one per patch file and per overlay)", r.Release, v, len(set.Patches), want)
			}
			for _, p := range set.Patches {
				header, _, _ := strings.Cut(string(p.Data), "\n---\n")
				for _, sec := range patch.HeaderSections {
					if !strings.Contains(header, "\n"+sec) {
						t.Errorf("%s %s: %s lacks %q", r.Release, v, p.Name, sec)
					}
				}
			}
		}
	}
}
