package patch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/testfile"
)

const onePatch = `From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Kubelet Toolchain <toolchain@kubelet-toolchain.invalid>
Subject: [PATCH] change b

---
 a.txt | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 a
-b
+B
 c
`

const twoPatch = `From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
Subject: [PATCH] change y

---
diff --git a/b.txt b/b.txt
--- a/b.txt
+++ b/b.txt
@@ -2,7 +2,7 @@
 p1
 p2
 x
-y
+Y
 z
 p3
 p4
`

const body = "h\np1\np2\nx\ny\nz\np3\np4\n"

func setup(t *testing.T, b string) (root, tree string) {
	root, tree = t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(root, "patches", "s"), 0o755)
	os.WriteFile(filepath.Join(root, "patches", "s", "0001-change-b.patch"), []byte(onePatch), 0o644)
	os.WriteFile(filepath.Join(root, "patches", "s", "0002-change-y.patch"), []byte(twoPatch), 0o644)
	os.MkdirAll(filepath.Join(root, "overlay", "s", "pkg", "new"), 0o755)
	os.WriteFile(filepath.Join(root, "overlay", "s", "pkg", "new", "new.go"), []byte("package new\n"), 0o644)
	os.WriteFile(filepath.Join(tree, "a.txt"), []byte("a\nb\nc\n"), 0o644)
	os.WriteFile(filepath.Join(tree, "b.txt"), []byte(b), 0o644)
	return root, tree
}

func TestApply(t *testing.T) {
	root, tree := setup(t, "w\n"+body) // b.txt hunk applies at an offset
	s, err := Load(root, "s")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Apply(context.Background(), tree)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(tree, "a.txt")); string(got) != "a\nB\nc\n" {
		t.Errorf("a.txt = %q", got)
	}
	if len(res) != 2 || len(res[1].Offsets) != 1 {
		t.Errorf("offset not reported: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(tree, "pkg", "new", "new.go")); err != nil {
		t.Errorf("overlay not laid: %v", err)
	}
}

func TestApplyFailureNamesPatchFileAndHunk(t *testing.T) {
	root, tree := setup(t, strings.Replace(body, "y", "changed upstream", 1))
	s, err := Load(root, "s")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Apply(context.Background(), tree)
	if err == nil {
		t.Fatal("patch applied to a tree it does not fit")
	}
	for _, w := range []string{"0002-change-y.patch", "b.txt", "series s"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
	// git apply is all-or-nothing per patch: b.txt is untouched.
	if got, _ := os.ReadFile(filepath.Join(tree, "b.txt")); string(got) != strings.Replace(body, "y", "changed upstream", 1) {
		t.Errorf("failed patch left b.txt half-applied: %q", got)
	}
}

func TestApplyRefusesFuzz(t *testing.T) {
	// The context line "x" differs: patch(1) would fuzz, git apply must not.
	root, tree := setup(t, strings.Replace(body, "x", "X", 1))
	s, _ := Load(root, "s")
	if _, err := s.Apply(context.Background(), tree); err == nil {
		t.Fatal("a hunk whose context differs was applied")
	}
}

func TestOverlayRefusesToOverwrite(t *testing.T) {
	root, tree := setup(t, body)
	os.MkdirAll(filepath.Join(tree, "pkg", "new"), 0o755)
	os.WriteFile(filepath.Join(tree, "pkg", "new", "new.go"), []byte("package upstream\n"), 0o644)
	s, _ := Load(root, "s")
	if _, err := s.Apply(context.Background(), tree); err == nil || !strings.Contains(err.Error(), "make that change a patch") {
		t.Fatalf("overlay overwrote an upstream file: %v", err)
	}
}

func TestLoadRejectsBadNames(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "patches", "s"), 0o755)
	os.WriteFile(filepath.Join(root, "patches", "s", "fix.diff"), []byte(onePatch), 0o644)
	if _, err := Load(root, "s"); err == nil {
		t.Fatal("a file not named NNNN-subject.patch was accepted")
	}
	if _, err := Load(root, "absent"); err == nil {
		t.Fatal("a series that does not exist was accepted")
	}
}

// A series whose directory holds only its README.md changes nothing; an
// empty directory is not a series (git does not keep it).
func TestLoadReadmeOnlySeries(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "patches", "named", "x"), 0o755)
	os.Remove(filepath.Join(root, "patches", "named", "x"))
	os.WriteFile(filepath.Join(root, "patches", "named", "README.md"), []byte("why nothing\n"), 0o644)
	s, err := Load(root, "named")
	if err != nil || len(s.Patches) != 0 || s.Overlay != "" {
		t.Fatalf("README-only series: %+v, %v", s, err)
	}
	os.MkdirAll(filepath.Join(root, "patches", "empty"), 0o755)
	if _, err := Load(root, "empty"); err == nil {
		t.Fatal("an empty series directory was accepted")
	}
}

func TestCheckHeaders(t *testing.T) {
	root, _ := setup(t, body)
	s, _ := Load(root, "s")
	if err := s.CheckHeaders(); err == nil || !strings.Contains(err.Error(), `"Drop:"`) {
		t.Fatalf("patches without header sections accepted: %v", err)
	}
}

func TestOverlayHeader(t *testing.T) {
	root := t.TempDir()
	testfile.Write(t, filepath.Join(root, "overlay", "o", "pkg", "a.go"), "package a\n")
	s, err := Load(root, "o")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckHeaders(); err == nil || !strings.Contains(err.Error(), "o.header") {
		t.Fatalf("an overlay without its header accepted: %v", err)
	}
	testfile.Write(t, filepath.Join(root, "overlay", "o.header"), "add a\n\nWhat: a.\n\nWhy: b.\n\nUpstream: none.\n")
	if err := s.CheckHeaders(); err == nil || !strings.Contains(err.Error(), `"Drop:"`) {
		t.Fatalf("an overlay header without Drop: accepted: %v", err)
	}
	testfile.Write(t, filepath.Join(root, "overlay", "o.header"), "What: a.\n\nWhy: b.\n\nUpstream: none.\n\nDrop: never.\n")
	if _, _, err := s.OverlayHeader(); err == nil || !strings.Contains(err.Error(), "subject") {
		t.Fatalf("a header without a subject line accepted: %v", err)
	}
	testfile.Write(t, filepath.Join(root, "overlay", "o.header"), "add a\n\nWhat: a.\n\nWhy: b.\n\nUpstream: none.\n\nDrop: never.\n")
	subject, body, err := s.OverlayHeader()
	if err != nil || subject != "add a" || !strings.HasPrefix(body, "What: a.") || !strings.HasSuffix(body, "Drop: never.") {
		t.Fatalf("OverlayHeader = %q, %q, %v", subject, body, err)
	}
}

// Every patch of the repository, and every overlay's header, carries the
// full header.
func TestRepositoryPatchHeaders(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	seen := map[string]bool{}
	for _, top := range []string{"patches", "overlay"} {
		dirs, err := os.ReadDir(filepath.Join(root, top))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			if !d.IsDir() || seen[d.Name()] {
				continue
			}
			seen[d.Name()] = true
			s, err := Load(root, d.Name())
			if err != nil {
				t.Fatal(err)
			}
			if err := s.CheckHeaders(); err != nil {
				t.Error(err)
			}
		}
	}
}
