// Package patch lays a series over a tree: its git format-patch files in
// order, strictly (no fuzz), then its overlay of whole new files.
package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/tools/execx"
)

// Series is one named patch series of the repository.
type Series struct {
	Name string
	// Patches are absolute paths of NNNN-*.patch files, in order.
	Patches []string
	// Overlay is the overlay/<name> directory, or "" when there is none.
	Overlay string
	// Header is overlay/<name>.header, the commit message of the one
	// patch the overlay exports as (see OverlayHeader); "" without an
	// overlay.
	Header string
}

var patchName = regexp.MustCompile(`^[0-9]{4}-[A-Za-z0-9][A-Za-z0-9._-]*\.patch$`)

// Load finds series name under root (patches/<name>, overlay/<name>).
// patches/<name> may hold a README.md beside its patches, or alone: a
// series with nothing to change (a control plane built from the vanilla
// tree is still named by its series).
func Load(root, name string) (*Series, error) {
	s := &Series{Name: name}
	dir := filepath.Join(root, "patches", name)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	readme := false
	for _, e := range entries {
		if e.Name() == "README.md" {
			readme = true
			continue
		}
		if !patchName.MatchString(e.Name()) {
			return nil, fmt.Errorf("series %s: %s is not named NNNN-subject.patch", name, filepath.Join(dir, e.Name()))
		}
		s.Patches = append(s.Patches, filepath.Join(dir, e.Name()))
	}
	sort.Strings(s.Patches)
	if fi, err := os.Stat(filepath.Join(root, "overlay", name)); err == nil && fi.IsDir() {
		s.Overlay = filepath.Join(root, "overlay", name)
		s.Header = s.Overlay + ".header"
	}
	if len(s.Patches) == 0 && s.Overlay == "" && !readme {
		return nil, fmt.Errorf("series %s: neither patches/%s nor overlay/%s exists", name, name, name)
	}
	return s, nil
}

// Files lists every file of the series (patches, then overlay files), for
// fingerprinting.
func (s *Series) Files() ([]string, error) {
	files := append([]string(nil), s.Patches...)
	if s.Overlay == "" {
		return files, nil
	}
	err := filepath.WalkDir(s.Overlay, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, path)
		}
		return err
	})
	return files, err
}

// PatchedFiles lists the tree-relative files the series' patches modify,
// in patch order.
func (s *Series) PatchedFiles() ([]string, error) {
	var out []string
	for _, p := range s.Patches {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(data), "\n") {
			if name, ok := strings.CutPrefix(l, "+++ b/"); ok {
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// HeaderSections must each start a line of every patch's commit message:
// what and why, the upstream state, and when the patch can go.
var HeaderSections = []string{"What:", "Why:", "Upstream:", "Drop:"}

// CheckHeaders reports the patches of the series whose header lacks a section.
func (s *Series) CheckHeaders() error {
	var problems []string
	for _, p := range s.Patches {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// The header is everything before the diffstat separator.
		header, _, _ := strings.Cut(string(data), "\n---\n")
		problems = append(problems, missingSections(p, header)...)
	}
	if s.Overlay != "" {
		if _, _, err := s.OverlayHeader(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("patch headers incomplete:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

func missingSections(file, header string) []string {
	var out []string
	for _, sec := range HeaderSections {
		if !strings.Contains("\n"+header, "\n"+sec) {
			out = append(out, fmt.Sprintf("%s: no %q section", file, sec))
		}
	}
	return out
}

// OverlayHeader reads the overlay's header file: its first line is the
// subject (what the files add), then a blank line and the body with the
// sections every patch carries. An overlay exports as one patch (package
// quilt), so a packager reads one message for its files, not one per file.
func (s *Series) OverlayHeader() (subject, body string, err error) {
	data, err := os.ReadFile(s.Header)
	if err != nil {
		return "", "", fmt.Errorf("series %s: overlay/%s needs its header %s (a subject line, then %s): %w",
			s.Name, s.Name, filepath.Base(s.Header), strings.Join(HeaderSections, ", "), err)
	}
	subject, body, _ = strings.Cut(strings.TrimSpace(string(data)), "\n")
	subject, body = strings.TrimSpace(subject), strings.TrimSpace(body)
	if subject == "" || slices.ContainsFunc(HeaderSections, func(sec string) bool { return strings.HasPrefix(subject, sec) }) {
		return "", "", fmt.Errorf("%s: the first line must be the subject (what the overlay adds)", s.Header)
	}
	if missing := missingSections(s.Header, body); len(missing) > 0 {
		return "", "", errors.New(strings.Join(missing, "; "))
	}
	return subject, body, nil
}

// Result says how a patch applied.
type Result struct {
	Patch string
	// Offsets are git apply's notes on hunks that applied at an offset.
	Offsets []string
}

var offsetLine = regexp.MustCompile(`(?m)^Hunk #\d+ succeeded at \d+ \(offset -?\d+ lines?\)\.$`)

// Apply applies the series to tree. git apply is all-or-nothing per patch
// and never fuzzes; callers apply to a temporary tree, so a failure in a
// later patch leaves nothing half-applied anywhere that a build could use.
func (s *Series) Apply(ctx context.Context, tree string) ([]Result, error) {
	var results []Result
	for _, p := range s.Patches {
		out, err := execx.Run(ctx, execx.Cmd{
			Name: "git", Args: []string{"apply", "-v", "--whitespace=nowarn", p}, Dir: tree,
			// Keep git from finding an enclosing repository: paths are the tree's.
			Env: []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(tree)},
		})
		if err != nil {
			return results, fmt.Errorf("series %s: patch %s does not apply to %s:\n%s", s.Name, filepath.Base(p), tree, rejects(string(out)))
		}
		results = append(results, Result{Patch: filepath.Base(p), Offsets: offsetLine.FindAllString(string(out), -1)})
	}
	if s.Overlay != "" {
		if err := overlay(s.Overlay, tree); err != nil {
			return results, fmt.Errorf("series %s: overlay: %w", s.Name, err)
		}
	}
	return results, nil
}

// rejects keeps the lines of git apply's output that name the failing
// file and hunk.
func rejects(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "error:") || strings.HasPrefix(l, "Checking patch") || strings.Contains(l, "Hunk #") || strings.HasPrefix(l, "Falling back") {
			keep = append(keep, "  "+l)
		}
	}
	if len(keep) == 0 {
		return out
	}
	return strings.Join(keep, "\n")
}

// overlay copies whole files into tree; it refuses to overwrite a file the
// tree already has, since changes to upstream files belong in a patch.
func overlay(src, tree string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		dst := filepath.Join(tree, rel)
		if _, err := os.Lstat(dst); err == nil {
			return fmt.Errorf("%s would overwrite upstream %s: make that change a patch", path, rel)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return fsutil.CopyFile(path, dst)
	})
}
