// Package schemagen extracts a type graph of one Kubernetes release from
// that release's own source, as a standalone Go package: the core/v1
// Container graph (package v1) for the container hash, and the internal
// Pod graph (package api, <= 1.7's pkg/api) for the static pod UID. A newer
// kubelet compiled with it can compute the value an older kubelet would:
// go-spew prints type names as "v1.Container", "api.Pod", ..., so the
// package name, type names and field order must be exactly the old
// release's.
package schemagen

import (
	"archive/zip"
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Schema is one kind of type graph: where its types.go lives, the type
// the graph starts from and the package name go-spew must print.
type Schema struct {
	// Name is the --schema value ("" is the container schema).
	Name string
	// Files are where types.go lives in the trees, newest layout first.
	Files   []string
	Root    string
	Package string
	// What describes the graph in the generated file's header.
	What string
}

// Container is the core/v1 Container graph (the container hash).
var Container = Schema{
	Files: []string{
		"staging/src/k8s.io/api/core/v1/types.go", // 1.8 - 1.14
		"pkg/api/v1/types.go",                     // <= 1.7
	},
	Root: "Container", Package: "v1", What: "The core/v1 Container type graph",
}

// InternalPod is the internal Pod graph of pkg/api (<= 1.7; 1.8 moved it
// to pkg/apis/core, package core), which static pod UIDs are derived from.
var InternalPod = Schema{
	Name:  "internal-pod",
	Files: []string{"pkg/api/types.go"},
	Root:  "Pod", Package: "api", What: "The internal (pkg/api) Pod type graph",
}

// SchemaNamed returns the schema a --schema value names.
func SchemaNamed(name string) (Schema, error) {
	for _, s := range []Schema{Container, InternalPod} {
		if s.Name == name {
			return s, nil
		}
	}
	return Schema{}, fmt.Errorf("unknown schema %q (have \"\" for the container graph, %q)", name, InternalPod.Name)
}

// FromZip reads the schema's types.go of a module zip and returns the
// generated package source. header is written at the top as a comment.
func (sc Schema) FromZip(zipPath, modulePrefix, header string) ([]byte, error) {
	z, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	for _, name := range sc.Files {
		f, err := z.Open(modulePrefix + "/" + name)
		if err != nil {
			continue
		}
		src, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		return sc.Generate(src, name, header)
	}
	return nil, fmt.Errorf("%s: no %s types.go (looked for %s)", zipPath, sc.Package, strings.Join(sc.Files, ", "))
}

// Generate returns the container graph of a core/v1 types.go.
func Generate(src []byte, filename, header string) ([]byte, error) {
	return Container.Generate(src, filename, header)
}

// Generate returns the type graph reachable from the schema's root in the
// given types.go source, as the schema's package.
func (sc Schema) Generate(src []byte, filename, header string) ([]byte, error) {
	Root := sc.Root
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filename, src, 0) // comments dropped
	if err != nil {
		return nil, err
	}
	specs := map[string]*ast.TypeSpec{}
	for _, d := range file.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				specs[ts.Name.Name] = ts
			}
		}
	}
	if specs[Root] == nil {
		return nil, fmt.Errorf("%s: no type %s", filename, Root)
	}
	imports := map[string]string{} // local name -> path
	for _, im := range file.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
	}

	used := map[string]bool{}
	usedImports := map[string]bool{}
	var unknown []string
	queue := []string{Root}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if used[name] {
			continue
		}
		spec := specs[name]
		if spec == nil {
			return nil, fmt.Errorf("%s: type %s is referenced but not declared in this file", filename, name)
		}
		used[name] = true
		ast.Inspect(spec.Type, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					if _, ok := imports[id.Name]; !ok {
						unknown = append(unknown, id.Name)
					}
					usedImports[id.Name] = true
				}
				return false
			case *ast.Ident:
				if _, ok := specs[x.Name]; ok && !used[x.Name] {
					queue = append(queue, x.Name)
				}
			}
			return true
		})
	}

	if len(unknown) > 0 {
		return nil, fmt.Errorf("%s: the %s graph uses packages the file does not import: %v", filename, Root, unknown)
	}

	var out bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		fmt.Fprintf(&out, "// %s\n", l)
	}
	fmt.Fprintf(&out, "\npackage %s\n\n", sc.Package)
	var names []string
	for n := range usedImports {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 0 {
		out.WriteString("import (\n")
		for _, n := range names {
			fmt.Fprintf(&out, "\t%s %q\n", n, imports[n])
		}
		out.WriteString(")\n\n")
	}
	// Declarations in source order, so a diff against upstream reads easily.
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			if !used[ts.Name.Name] {
				continue
			}
			out.WriteString("type ")
			if err := printer.Fprint(&out, fset, ts); err != nil {
				return nil, err
			}
			out.WriteString("\n\n")
		}
	}
	return format.Source(out.Bytes())
}

// TypeCount reports how many types a generated source declares.
func TypeCount(src []byte) int {
	return strings.Count(string(src), "\ntype ")
}
