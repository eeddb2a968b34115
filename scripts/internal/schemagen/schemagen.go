// Package schemagen extracts the core/v1 Container type graph of one
// Kubernetes release from that release's own source, as a standalone Go
// package named v1. A newer kubelet compiled with it can compute the
// container hash an older kubelet would: go-spew prints type names as
// "v1.Container", "v1.ResourceList", ..., so the package name, type names
// and field order must be exactly the old release's.
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

// typesFiles are where core/v1 lives in the trees, newest layout first.
var typesFiles = []string{
	"staging/src/k8s.io/api/core/v1/types.go", // 1.8 - 1.14
	"pkg/api/v1/types.go",                     // <= 1.7
}

// Root is the type the graph starts from.
const Root = "Container"

// FromZip reads core/v1 types.go of a module zip and returns the generated
// package source. header is written at the top as a comment.
func FromZip(zipPath, modulePrefix, header string) ([]byte, error) {
	z, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	for _, name := range typesFiles {
		f, err := z.Open(modulePrefix + "/" + name)
		if err != nil {
			continue
		}
		src, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		return Generate(src, name, header)
	}
	return nil, fmt.Errorf("%s: no core/v1 types.go (looked for %s)", zipPath, strings.Join(typesFiles, ", "))
}

// Generate returns the type graph reachable from Container in the given
// types.go source, as package v1.
func Generate(src []byte, filename, header string) ([]byte, error) {
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
		return nil, fmt.Errorf("%s: the Container graph uses packages the file does not import: %v", filename, unknown)
	}

	var out bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		fmt.Fprintf(&out, "// %s\n", l)
	}
	out.WriteString("\npackage v1\n\n")
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
