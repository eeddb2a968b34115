// Package schemadiff predicts, from two releases' Container type graphs
// (the schemas the legacy-types overlay commits, generated from each
// release's own tree), which containers a kubelet switch between the two
// recreates. The container hash is fnv32a over a go-spew dump, and go-spew
// prints every field of every struct it reaches, nil ones included; so a
// container's dump differs between the releases exactly when its value
// reaches a struct whose fields differ (a field added, removed, renamed,
// retyped or moved), the root Container included. The prediction shares
// no code with the kubelets that compute the hashes it is checked against.
package schemadiff

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
)

// Graph is a type graph: struct name -> its fields in order.
type Graph map[string][]Field

// Field is one struct field as it prints: name, type expression, JSON name.
type Field struct {
	Name, Type, JSON string
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
				tag := ""
				if fl.Tag != nil {
					raw, _ := strconv.Unquote(fl.Tag.Value)
					tag, _, _ = strings.Cut(reflect.StructTag(raw).Get("json"), ",")
				}
				if len(fl.Names) == 0 { // embedded: named after its type
					fields = append(fields, Field{Name: baseName(typ), Type: typ, JSON: tag})
				}
				for _, n := range fl.Names {
					fields = append(fields, Field{Name: n.Name, Type: typ, JSON: tag})
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

// Changed lists the structs of b that print differently from a's struct
// of the same name (or that a lacks).
func Changed(a, b Graph) map[string]bool {
	out := map[string]bool{}
	for name, fb := range b {
		if !reflect.DeepEqual(a[name], fb) {
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
