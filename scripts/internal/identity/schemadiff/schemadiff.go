// Package schemadiff predicts, from two releases' Container type graphs
// (the schemas the legacy-types overlay commits, generated from each
// release's own tree), which containers a kubelet switch between the two
// recreates. The container hash is fnv32a over a go-spew dump, and go-spew
// prints every field of every struct it reaches, nil ones included; so a
// container's dump differs between the releases exactly when its value
// reaches a struct whose fields differ (a field added, removed, renamed,
// retyped or moved), the root Container included. From 1.16 the hash is
// fnv32a over the Container's JSON (kubernetes#57741), which leaves empty
// omitempty fields out: there a container's hash changes only when it sets
// a field one release has and the other lacks (JSONDiffers). The
// prediction shares no code with the kubelets that compute the hashes it
// is checked against.
package schemadiff

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Graph is a type graph: struct name -> its fields in order.
type Graph map[string][]Field

// Field is one struct field as it prints: name, type expression, JSON
// name; whether encoding/json leaves it out when empty, and whether it is
// embedded (its fields then print in its place, JSON name "").
type Field struct {
	Name, Type, JSON    string
	OmitEmpty, Embedded bool
}

// Parse reads the struct types of a generated schema (types.go source).
func Parse(filename string, src []byte) (Graph, error) {
	f, err := parser.ParseFile(token.NewFileSet(), filename, src, 0)
	if err != nil {
		return nil, err
	}
	g := Graph{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			ts := s.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			var fields []Field
			for _, fl := range st.Fields.List {
				typ := exprString(fl.Type)
				tag, opts := "", ""
				if fl.Tag != nil {
					raw, _ := strconv.Unquote(fl.Tag.Value)
					tag, opts, _ = strings.Cut(reflect.StructTag(raw).Get("json"), ",")
				}
				omit := slices.Contains(strings.Split(opts, ","), "omitempty")
				if len(fl.Names) == 0 { // embedded: named after its type
					fields = append(fields, Field{Name: baseName(typ), Type: typ, JSON: tag, OmitEmpty: omit, Embedded: true})
				}
				for _, n := range fl.Names {
					fields = append(fields, Field{Name: n.Name, Type: typ, JSON: tag, OmitEmpty: omit})
				}
			}
			g[ts.Name.Name] = fields
		}
	}
	if len(g) == 0 {
		return nil, fmt.Errorf("%s: no struct types", filename)
	}
	return g, nil
}

// Changed lists the structs of b that go-spew prints differently from
// a's struct of the same name (or that a lacks). go-spew ignores the JSON
// options.
func Changed(a, b Graph) map[string]bool {
	spewed := func(fs []Field) []Field {
		out := make([]Field, len(fs))
		for i, f := range fs {
			out[i] = Field{Name: f.Name, Type: f.Type, JSON: f.JSON}
		}
		return out
	}
	out := map[string]bool{}
	for name, fb := range b {
		if fa, ok := a[name]; !ok || !reflect.DeepEqual(spewed(fa), spewed(fb)) {
			out[name] = true
		}
	}
	return out
}

// Differs says whether a container, as the API serves it (its JSON,
// decoded into maps), reaches one of the changed structs of g starting at
// root, and names the first path that does.
func Differs(g Graph, changed map[string]bool, root string, container map[string]any) (bool, string) {
	return g.reaches(changed, root, container, root)
}

func (g Graph) reaches(changed map[string]bool, typ string, v any, path string) (bool, string) {
	ref := strings.HasPrefix(typ, "*") || strings.HasPrefix(typ, "[]") || strings.HasPrefix(typ, "map[")
	switch {
	case v == nil && ref:
		return false, "" // nil pointer, slice or map: printed <nil> in either release
	case strings.HasPrefix(typ, "*"):
		return g.reaches(changed, typ[1:], v, path)
	case strings.HasPrefix(typ, "[]"):
		items, _ := v.([]any)
		for i, it := range items {
			if ok, p := g.reaches(changed, typ[2:], it, fmt.Sprintf("%s[%d]", path, i)); ok {
				return true, p
			}
		}
		return false, ""
	case strings.HasPrefix(typ, "map["):
		elem := typ[strings.Index(typ, "]")+1:]
		m, _ := v.(map[string]any)
		for k, it := range m {
			if ok, p := g.reaches(changed, elem, it, path+"["+k+"]"); ok {
				return true, p
			}
		}
		return false, ""
	}
	fields, isStruct := g[typ]
	if !isStruct {
		return false, "" // a named scalar, or a type from elsewhere (Quantity, IntOrString)
	}
	// A struct held by value prints all its fields even when the JSON
	// omits it (its zero value).
	if changed[typ] {
		return true, path + " (" + typ + ")"
	}
	obj, _ := v.(map[string]any)
	for _, f := range fields {
		var fv any
		if f.JSON == "" || f.JSON == "-" {
			fv = obj // inline
		} else {
			fv = obj[f.JSON]
		}
		if ok, p := g.reaches(changed, f.Type, fv, path+"."+f.JSON); ok {
			return true, p
		}
	}
	return false, ""
}

func exprString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + exprString(t.X)
	case *ast.ArrayType:
		return "[]" + exprString(t.Elt)
	case *ast.MapType:
		return "map[" + exprString(t.Key) + "]" + exprString(t.Value)
	case *ast.SelectorExpr:
		return exprString(t.X) + "." + t.Sel.Name
	default:
		return fmt.Sprintf("%T", e)
	}
}

func baseName(typ string) string {
	typ = strings.TrimPrefix(typ, "*")
	if i := strings.LastIndex(typ, "."); i >= 0 {
		return typ[i+1:]
	}
	return typ
}

// JSONDiffers says whether a container, as the API serves it (its JSON,
// decoded into maps), marshals to other JSON when decoded into graph a's
// root than into b's (what each release's kubelet hashes from 1.16 on: a
// field one graph lacks is dropped when decoded), and names the first
// place where they part.
func JSONDiffers(a, b Graph, root string, container map[string]any) (bool, string) {
	ja, jb := a.marshal(root, container, root), b.marshal(root, container, root)
	for i := range min(len(ja), len(jb)) {
		if ja[i] != jb[i] {
			return true, ja[i] + " | " + jb[i]
		}
	}
	switch {
	case len(ja) > len(jb):
		return true, ja[len(jb)] + " | (end)"
	case len(jb) > len(ja):
		return true, "(end) | " + jb[len(ja)]
	}
	return false, ""
}

// marshal renders what encoding/json writes for v decoded into typ, one
// token per line with its path: struct fields in declaration order
// (embedded ones' fields in their place), empty omitempty fields left
// out, map keys sorted. Types outside the graph (named scalars,
// Quantity, IntOrString) are written as the API gave them: both graphs
// hold the same ones.
func (g Graph) marshal(typ string, v any, path string) []string {
	switch {
	case strings.HasPrefix(typ, "*"):
		if v == nil {
			return []string{path + "=null"}
		}
		return g.marshal(typ[1:], v, path)
	case strings.HasPrefix(typ, "[]"):
		items, _ := v.([]any)
		if v == nil {
			return []string{path + "=null"}
		}
		out := []string{path + "=["}
		for i, it := range items {
			out = append(out, g.marshal(typ[2:], it, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return append(out, path+"=]")
	case strings.HasPrefix(typ, "map["):
		m, _ := v.(map[string]any)
		if v == nil {
			return []string{path + "=null"}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := []string{path + "={"}
		for _, k := range keys {
			out = append(out, g.marshal(typ[strings.Index(typ, "]")+1:], m[k], path+"["+k+"]")...)
		}
		return append(out, path+"=}")
	}
	fields, isStruct := g[typ]
	if !isStruct {
		data, _ := json.Marshal(v)
		return []string{path + "=" + string(data)}
	}
	obj, _ := v.(map[string]any)
	out := []string{path + "={"}
	out = append(out, g.fields(fields, obj, path)...)
	return append(out, path+"=}")
}

// fields renders a struct's fields from obj, the JSON object it was
// decoded from.
func (g Graph) fields(fields []Field, obj map[string]any, path string) []string {
	var out []string
	for _, f := range fields {
		switch {
		case f.JSON == "-":
			continue
		case f.JSON == "" && f.Embedded:
			// Promoted: an embedded struct's fields print in its place
			// (a pointer to one is nil when none of them is set).
			inner, isStruct := g[strings.TrimPrefix(f.Type, "*")]
			if !isStruct {
				continue
			}
			out = append(out, g.fields(inner, obj, path)...)
			continue
		}
		name := f.JSON
		if name == "" {
			name = f.Name
		}
		v := obj[name]
		if f.OmitEmpty && g.isEmpty(f.Type, v) {
			continue
		}
		out = append(out, g.marshal(f.Type, v, path+"."+name)...)
	}
	return out
}

// isEmpty is encoding/json's omitempty test for a field of type typ on
// the value the API's JSON gives it: a nil pointer, an empty slice or map,
// a zero scalar; never a struct held by value.
func (g Graph) isEmpty(typ string, v any) bool {
	switch {
	case v == nil:
		_, isStruct := g[typ]
		return !isStruct
	case strings.HasPrefix(typ, "*"):
		return false
	}
	switch x := v.(type) {
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		_, isStruct := g[typ]
		return len(x) == 0 && !isStruct
	}
	return false
}
