// Package quilt exports the series a release+variant applies as a quilt
// patch set (a `series` file plus the patches, -p1, in order), the form
// debian/patches and rpm specs take: one patch per logical change. A
// series' own patches are exported as they are; its overlay (files the
// build copies in whole) becomes one added-files patch carrying the
// overlay's header, numbered after the series' patches, so the exported
// set alone turns the pristine tree into the built one.
package quilt

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/patch"
)

// Patch is one exported patch.
type Patch struct {
	// Series is the repository series it belongs to.
	Series string
	// Name is its path in the export: <series>/NNNN-subject.patch.
	Name string
	// Source is where it comes from in the repository:
	// patches/<series>/... or overlay/<series>/<path>.
	Source string
	// Paths are the tree paths it changes or adds (slash-separated).
	Paths []string
	// Overlay marks a patch generated from an overlay file.
	Overlay bool
	Data    []byte
}

// Set is the exported series of one release+variant.
type Set struct {
	Release string
	Variant matrix.Variant
	Series  []string
	Patches []Patch
}

// Default author of generated patches when a series has no patch to take
// it from.
const defaultFrom = "Kubelet Toolchain <toolchain@kubelet-toolchain.invalid>"

var (
	diffLine    = regexp.MustCompile(`(?m)^diff --git a/(\S+) b/(\S+)$`)
	fromLine    = regexp.MustCompile(`(?m)^From: (.+)$`)
	dateLine    = regexp.MustCompile(`(?m)^Date: (.+)$`)
	numberedRE  = regexp.MustCompile(`^([0-9]{4})-`)
	unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
)

// Export collects the patches release r applies for variant v, in order.
func Export(root string, r *matrix.Release, v matrix.Variant) (*Set, error) {
	set := &Set{Release: r.Release, Variant: v, Series: r.Series.For(v)}
	for _, name := range set.Series {
		s, err := patch.Load(root, name)
		if err != nil {
			return nil, err
		}
		last := 0
		from, date := defaultFrom, r.BuildDate.UTC().Format(time.RFC1123Z)
		for _, p := range s.Patches {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			base := filepath.Base(p)
			if m := numberedRE.FindStringSubmatch(base); m != nil {
				n, _ := strconv.Atoi(m[1])
				last = max(last, n)
			}
			if m := fromLine.FindSubmatch(data); m != nil {
				from = string(m[1])
			}
			if m := dateLine.FindSubmatch(data); m != nil {
				date = string(m[1])
			}
			var paths []string
			for _, m := range diffLine.FindAllSubmatch(data, -1) {
				paths = append(paths, string(m[2]))
			}
			if len(paths) == 0 {
				return nil, fmt.Errorf("series %s: %s changes no file (no `diff --git` line)", name, base)
			}
			set.Patches = append(set.Patches, Patch{
				Series: name, Name: name + "/" + base, Source: "patches/" + name + "/" + base,
				Paths: paths, Data: data,
			})
		}
		if s.Overlay == "" {
			continue
		}
		p, err := overlayPatch(s, last+1, from, date)
		if err != nil {
			return nil, err
		}
		set.Patches = append(set.Patches, *p)
	}
	return set, nil
}

// overlayPatch renders series s's overlay as one patch numbered n after
// the series' own: the overlay's header (overlay/<series>.header) as its
// message, then an added-file diff per file, in lexical order.
func overlayPatch(s *patch.Series, n int, from, date string) (*Patch, error) {
	subject, body, err := s.OverlayHeader()
	if err != nil {
		return nil, err
	}
	var files []string
	err = filepath.WalkDir(s.Overlay, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: overlay entries must be regular files", p)
		}
		rel, _ := filepath.Rel(s.Overlay, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var diffs, stat strings.Builder
	added := 0
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(s.Overlay, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		diff, lines, err := addedFileDiff(rel, data)
		if err != nil {
			return nil, fmt.Errorf("series %s: overlay %s: %w", s.Name, rel, err)
		}
		diffs.Write(diff)
		fmt.Fprintf(&stat, " %s | %d +\n", rel, lines)
		added += lines
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n")
	fmt.Fprintf(&b, "From: %s\nDate: %s\n", from, date)
	fmt.Fprintf(&b, "Subject: [PATCH] %s: %s\n\n%s\n\n", s.Name, subject, body)
	fmt.Fprintf(&b, "Files: new, from overlay/%s/ (the build copies them in whole).\n---\n", s.Name)
	fmt.Fprintf(&b, "%s %d files changed, %d insertions(+)\n\n%s", stat.String(), len(files), added, diffs.String())
	return &Patch{
		Series: s.Name, Name: fmt.Sprintf("%s/%04d-%s.patch", s.Name, n, slug(subject)),
		Source: "overlay/" + s.Name + "/", Paths: files, Overlay: true, Data: []byte(b.String()),
	}, nil
}

// slug is a patch file name's subject part, as git format-patch makes it
// (runs of other characters become one '-', at most 52 characters), cut
// at a word's end.
func slug(subject string) string {
	out := strings.Trim(unsafeChars.ReplaceAllString(subject, "-"), "-.")
	if len(out) > 52 {
		out = out[:52]
		if i := strings.LastIndexByte(out, '-'); i > 0 {
			out = out[:i]
		}
		out = strings.TrimRight(out, "-.")
	}
	return out
}

// addedFileDiff renders the git-style diff (also applied by patch -p1 and
// quilt) that creates rel with data, and its line count.
func addedFileDiff(rel string, data []byte) ([]byte, int, error) {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, 0, errors.New("not a text file; a binary overlay cannot be a quilt patch")
	}
	if len(data) == 0 {
		return nil, 0, errors.New("empty file; patch(1) cannot create it from a diff")
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var b strings.Builder
	blob := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(data))), data...))
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..%s\n--- /dev/null\n+++ b/%s\n", rel, rel, hex.EncodeToString(blob[:])[:7], rel)
	if len(lines) == 1 {
		fmt.Fprintf(&b, "@@ -0,0 +1 @@\n")
	} else {
		fmt.Fprintf(&b, "@@ -0,0 +1,%d @@\n", len(lines))
	}
	for _, l := range lines {
		b.WriteString("+" + l)
	}
	if !strings.HasSuffix(string(data), "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
	return []byte(b.String()), len(lines), nil
}

// SeriesFile renders the quilt series file.
func (s *Set) SeriesFile() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Kubernetes %s, %s: series %s, applied in this order with -p1\n", s.Release, s.Variant, strings.Join(s.Series, ", "))
	fmt.Fprintf(&b, "# onto the upstream tree with its vendor/ restored (make export-patches).\n")
	for _, p := range s.Patches {
		b.WriteString(p.Name + "\n")
	}
	return []byte(b.String())
}

// Write writes the series file and the patches into dir. A dir that holds
// an earlier export (a `series` file) has that export's files replaced; a
// non-empty dir without one is refused rather than mixed into.
func (s *Set) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		old, err := os.ReadFile(filepath.Join(dir, "series"))
		if err != nil {
			return fmt.Errorf("%s is not empty and holds no earlier export (no series file): choose an empty or new directory", dir)
		}
		for _, l := range strings.Split(string(old), "\n") {
			if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(f[0], "#") && !strings.Contains(f[0], "..") {
				os.Remove(filepath.Join(dir, filepath.FromSlash(f[0])))
				os.Remove(filepath.Join(dir, filepath.FromSlash(path.Dir(f[0])))) // only if now empty
			}
		}
	}
	for _, p := range s.Patches {
		dst := filepath.Join(dir, filepath.FromSlash(p.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(dst, p.Data, 0o644); err != nil {
			return err
		}
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, "series"), s.SeriesFile(), 0o644)
}
