// Package godeps reads Godeps/Godeps.json, the dependency manifest of
// Kubernetes trees up to 1.14, and groups its packages by repository root.
package godeps

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// File is the part of Godeps.json this toolchain reads.
type File struct {
	ImportPath string `json:"ImportPath"`
	GoVersion  string `json:"GoVersion"`
	Deps       []Dep  `json:"Deps"`
}

// Dep is one vendored package at one revision.
type Dep struct {
	ImportPath string `json:"ImportPath"`
	Comment    string `json:"Comment,omitempty"`
	Rev        string `json:"Rev"`
}

// Repo is one repository root at one revision and the packages vendored from it.
type Repo struct {
	Root    string
	Rev     string
	Comment string
	// Packages are relative to Root; "." is the root package itself.
	Packages []string
}

// Load parses a Godeps.json file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// Repos groups the file's packages by repository root, sorted by root.
// A root listed at two revisions is an error: vendor/ can hold only one.
func (f *File) Repos() ([]Repo, error) {
	byRoot := map[string]*Repo{}
	for _, d := range f.Deps {
		root, err := RepoRoot(d.ImportPath)
		if err != nil {
			return nil, err
		}
		r := byRoot[root]
		if r == nil {
			r = &Repo{Root: root, Rev: d.Rev, Comment: d.Comment}
			byRoot[root] = r
		} else if r.Rev != d.Rev {
			return nil, fmt.Errorf("%s is vendored at two revisions (%s and %s)", root, r.Rev, d.Rev)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(d.ImportPath, root), "/")
		if rel == "" {
			rel = "."
		}
		r.Packages = append(r.Packages, rel)
	}
	out := make([]Repo, 0, len(byRoot))
	for _, r := range byRoot {
		sort.Strings(r.Packages)
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Root < out[j].Root })
	return out, nil
}

// hostElems says how many path elements make a repository root on hosts
// whose layout is fixed (the same table cmd/go uses for known hosts).
var hostElems = map[string]int{
	"github.com":               3,
	"bitbucket.org":            3,
	"gitlab.com":               3,
	"golang.org":               3, // golang.org/x/<repo>
	"google.golang.org":        2,
	"cloud.google.com":         2, // cloud.google.com/go
	"k8s.io":                   2,
	"sigs.k8s.io":              2,
	"go.uber.org":              2,
	"go.etcd.io":               2,
	"go.opencensus.io":         1,
	"go4.org":                  1,
	"vbom.ml":                  2, // vbom.ml/util
	"go.pedge.io":              2,
	"gonum.org":                3, // gonum.org/v1/<repo>
	"honnef.co":                3, // honnef.co/go/tools
	"cuelang.org":              2,
	"golang.zx2c4.com":         2,
	"contrib.go.opencensus.io": 3,
}

// RepoRoot maps an import path to the root of the repository that holds it,
// e.g. github.com/docker/docker/pkg/mount -> github.com/docker/docker and
// gopkg.in/square/go-jose.v2/cipher -> gopkg.in/square/go-jose.v2.
func RepoRoot(importPath string) (string, error) {
	elems := strings.Split(importPath, "/")
	host := elems[0]
	if host == "gopkg.in" {
		// gopkg.in/pkg.vN or gopkg.in/user/pkg.vN
		for i := 1; i < len(elems) && i <= 2; i++ {
			if isGopkgVersioned(elems[i]) {
				return strings.Join(elems[:i+1], "/"), nil
			}
		}
		return "", fmt.Errorf("import path %q: gopkg.in path without a .vN element", importPath)
	}
	n, ok := hostElems[host]
	if !ok {
		return "", fmt.Errorf("import path %q: no repository-root rule for host %q (add one to godeps.hostElems)", importPath, host)
	}
	if len(elems) < n {
		return "", fmt.Errorf("import path %q: too short for a %s repository", importPath, host)
	}
	return strings.Join(elems[:n], "/"), nil
}

func isGopkgVersioned(elem string) bool {
	i := strings.LastIndex(elem, ".v")
	if i <= 0 || i+2 >= len(elem) {
		return false
	}
	for _, c := range elem[i+2:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
