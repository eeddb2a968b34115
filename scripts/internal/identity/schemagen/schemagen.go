// Package schemagen extracts a type graph of one Kubernetes release from
// that release's own source, as a standalone Go package: the core/v1
// Container graph (package v1) for the container hash, and the internal
// Pod graph (package api, <= 1.7's pkg/api; package core from 1.9) for
// the static pod UID. A newer kubelet compiled with it can compute the
// value an older kubelet would:
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
	"path"
	"sort"
	"strconv"
	"strings"
)

// Schema is one kind of type graph: where its types.go lives, the types
// the graph starts from and the package name go-spew must print.
type Schema struct {
	// Name is the --schema value ("" is the container schema).
	Name string
	// Files are where types.go lives in the trees, newest layout first.
	Files []string
	// Roots are the types the graph starts from.
	Roots []string
	// OptionalRoots join Roots where the release declares them (meta/v1's
	// Condition, which the internal core graph reaches from 1.24 on).
	OptionalRoots []string
	Package       string
	// Siblings are other files of types.go's directory whose types join
	// the graph (meta/v1's Time is declared in time.go).
	Siblings []string
	// Provided are types of the graph that a hand-written file beside the
	// generated one declares (meta/v1's Time lives in time.go, and the
	// official graph holds it in go1.8.3's layout).
	Provided []string
	// Imports replace import paths of the release's file: the official
	// graphs hold go1.8.3's runtime layouts (overlay legacy-types, go18)
	// instead of this Go's. "%s" stands for the release's directory ("v17").
	Imports map[string]string
	// What describes the graph in the generated file's header.
	What string
}

// go18 is where the legacy-types overlay keeps go1.8.3's runtime layouts.
const go18 = "k8s.io/kubernetes/pkg/kubelet/legacytypes/go18/"

// Container is the core/v1 Container graph (the container hash), as a
// kubelet built by Go >= 1.9 prints it.
var Container = Schema{
	Files: []string{
		"core/v1/types.go",                        // the k8s.io/api module zip (the modules era)
		"staging/src/k8s.io/api/core/v1/types.go", // 1.8 - 1.14
		"pkg/api/v1/types.go",                     // <= 1.7
	},
	Roots: []string{"Container"}, Package: "v1", What: "The core/v1 Container type graph",
}

// ContainerOfficial is the Container graph as the official go1.8.3 build
// of 1.7 or 1.8 prints it: quantities in go1.8.3's math/big layout.
var ContainerOfficial = Schema{
	Name: "container-official", Files: Container.Files, Roots: Container.Roots, Package: "v1",
	Imports: map[string]string{"k8s.io/apimachinery/pkg/api/resource": go18 + "resource"},
	What:    "The core/v1 Container type graph, runtime types in go1.8.3's layout,",
}

// InternalPod is the internal Pod graph of pkg/api (<= 1.7; 1.8 moved it
// to pkg/apis/core, package core), which static pod UIDs are derived from.
var InternalPod = Schema{
	Name:  "internal-pod",
	Files: []string{"pkg/api/types.go"},
	Roots: []string{"Pod"}, Package: "api", What: "The internal (pkg/api) Pod type graph",
}

// InternalCorePod is the internal Pod graph of pkg/apis/core (1.9 and
// later, package core): what 1.12's static pod UIDs are derived from, for
// the 1.13 kubelet that keeps them.
var InternalCorePod = Schema{
	Name:  "internal-core-pod",
	Files: []string{"pkg/apis/core/types.go"},
	Roots: []string{"Pod"}, Package: "core", What: "The internal (pkg/apis/core) Pod type graph",
}

// InternalPodOfficial is the internal Pod graph as the official go1.8.3
// build prints it: times and quantities in go1.8.3's layout, and the
// object metadata from MetaOfficial (it holds times).
var InternalPodOfficial = Schema{
	Name: "internal-pod-official", Files: InternalPod.Files, Roots: InternalPod.Roots, Package: "api",
	Imports: map[string]string{
		"k8s.io/apimachinery/pkg/api/resource": go18 + "resource",
		"k8s.io/apimachinery/pkg/apis/meta/v1": "k8s.io/kubernetes/pkg/kubelet/legacytypes/%s/official/meta",
	},
	What: "The internal (pkg/api) Pod type graph, runtime types in go1.8.3's layout,",
}

// MetaOfficial is the part of apimachinery's meta/v1 the internal Pod
// graph uses, as the official go1.8.3 build prints it (Time is declared
// by hand beside it: time.go, not types.go).
var MetaOfficial = Schema{
	Name:  "meta-official",
	Files: []string{"staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go"},
	Roots: []string{"ObjectMeta", "LabelSelector", "TypeMeta"}, Package: "v1", Provided: []string{"Time"},
	What: "The meta/v1 ObjectMeta, LabelSelector and TypeMeta graph, runtime types in go1.8.3's layout,",
}

// InternalCorePodMeta is the internal Pod graph of pkg/apis/core with the
// object metadata of the release's own meta/v1 (Meta, beside it):
// apimachinery's ObjectMeta gained ManagedFields in 1.14 and lost
// Initializers in 1.16, so a newer tree's metav1 prints an older
// release's pod otherwise than that release did (the road 1.12 -> 1.18).
var InternalCorePodMeta = Schema{
	Name: "internal-core-pod-meta", Files: InternalCorePod.Files, Roots: InternalCorePod.Roots, Package: "core",
	Imports: map[string]string{"k8s.io/apimachinery/pkg/apis/meta/v1": "k8s.io/kubernetes/pkg/kubelet/legacytypes/%s/meta"},
	What:    "The internal (pkg/apis/core) Pod type graph, its object metadata from the release's meta/v1,",
}

// Meta is the part of apimachinery's meta/v1 the internal Pod graph uses,
// as the release's kubelet prints it.
var Meta = Schema{
	Name: "meta",
	Files: []string{
		"pkg/apis/meta/v1/types.go",                                 // the k8s.io/apimachinery module zip (the modules era)
		"staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go", // 1.8 - 1.14
	},
	Roots: MetaOfficial.Roots, Package: "v1", Siblings: []string{"time.go"},
	// ServiceStatus.Conditions (1.24): apimachinery 0.19 added Condition.
	OptionalRoots: []string{"Condition"},
	What:          "The meta/v1 ObjectMeta, LabelSelector, TypeMeta and Time graph",
}

// Schemas lists every schema by its --schema name.
var Schemas = []Schema{Container, ContainerOfficial, InternalPod, InternalCorePod, InternalPodOfficial, MetaOfficial, InternalCorePodMeta, Meta}

// SchemaNamed returns the schema a --schema value names.
func SchemaNamed(name string) (Schema, error) {
	var names []string
	for _, s := range Schemas {
		if s.Name == name {
			return s, nil
		}
		names = append(names, strconv.Quote(s.Name))
	}
	return Schema{}, fmt.Errorf("unknown schema %q (have %s)", name, strings.Join(names, ", "))
}

// FromZip reads the schema's types.go of a module zip and returns the
// generated package source. header is written at the top as a comment.
func (sc Schema) FromZip(zipPath, modulePrefix, header, dir string) ([]byte, error) {
	z, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	read := func(name string) ([]byte, error) {
		f, err := z.Open(modulePrefix + "/" + name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(f)
	}
	for _, name := range sc.Files {
		src, err := read(name)
		if err != nil {
			continue
		}
		files := []srcFile{{name, src}}
		for _, sib := range sc.Siblings {
			p := path.Join(path.Dir(name), sib)
			src, err := read(p)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", zipPath, p, err)
			}
			files = append(files, srcFile{p, src})
		}
		return sc.generate(files, header, dir)
	}
	return nil, fmt.Errorf("%s: no %s types.go (looked for %s)", zipPath, sc.Package, strings.Join(sc.Files, ", "))
}

// releaseDir is the directory name of a release's graphs: v1.7.5 -> v17.
func releaseDir(version string) string {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return version
	}
	return "v" + parts[0] + parts[1]
}

// Generate returns the container graph of a core/v1 types.go.
func Generate(src []byte, filename, header string) ([]byte, error) {
	return Container.Generate(src, filename, header)
}

// Generate returns the type graph reachable from the schema's root in the
// given types.go source, as the schema's package.
func (sc Schema) Generate(src []byte, filename, header string) ([]byte, error) {
	return sc.generate([]srcFile{{filename, src}}, header, "")
}

// srcFile is one Go file of the release's package.
type srcFile struct {
	name string
	src  []byte
}

func (sc Schema) generate(srcs []srcFile, header, dir string) ([]byte, error) {
	fset := token.NewFileSet()
	filename := srcs[0].name
	var files []*ast.File
	for _, f := range srcs {
		file, err := parser.ParseFile(fset, f.name, f.src, 0) // comments dropped
		if err != nil {
			return nil, err
		}
		files = append(files, file)
	}
	specs := map[string]*ast.TypeSpec{}
	for _, file := range files {
		for _, d := range file.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					ts := s.(*ast.TypeSpec)
					specs[ts.Name.Name] = ts
				}
			}
		}
	}
	for _, root := range sc.Roots {
		if specs[root] == nil {
			return nil, fmt.Errorf("%s: no type %s", filename, root)
		}
	}
	provided := map[string]bool{}
	for _, p := range sc.Provided {
		provided[p] = true
	}
	imports := map[string]string{} // local name -> path
	for _, file := range files {
		for _, im := range file.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			if to, ok := sc.Imports[path]; ok {
				if strings.Contains(to, "%s") {
					to = fmt.Sprintf(to, dir)
				}
				path = to
			}
			if other, ok := imports[name]; ok && other != path {
				return nil, fmt.Errorf("%s: the files import %s and %s as %s", filename, other, path, name)
			}
			imports[name] = path
		}
	}

	used := map[string]bool{}
	usedImports := map[string]bool{}
	var unknown []string
	queue := append([]string(nil), sc.Roots...)
	for _, root := range sc.OptionalRoots {
		if specs[root] != nil {
			queue = append(queue, root)
		}
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if used[name] {
			continue
		}
		spec := specs[name]
		if provided[name] {
			used[name] = true
			continue
		}
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
				if _, ok := specs[x.Name]; (ok || provided[x.Name]) && !used[x.Name] {
					queue = append(queue, x.Name)
				}
			}
			return true
		})
	}

	if len(unknown) > 0 {
		return nil, fmt.Errorf("%s: the %s graph uses packages the file does not import: %v", filename, strings.Join(sc.Roots, ", "), unknown)
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
	for _, file := range files {
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if !used[ts.Name.Name] || provided[ts.Name.Name] {
					continue
				}
				out.WriteString("type ")
				if err := printer.Fprint(&out, fset, ts); err != nil {
					return nil, err
				}
				out.WriteString("\n\n")
			}
		}
	}
	return format.Source(out.Bytes())
}

// TypeCount reports how many types a generated source declares.
func TypeCount(src []byte) int {
	return strings.Count(string(src), "\ntype ")
}
