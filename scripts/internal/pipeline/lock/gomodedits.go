package lock

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// Apply makes the edits to tree/go.mod.
func (e *GoModEdits) Apply(tree string) error {
	path := filepath.Join(tree, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		return err
	}
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
