package legacyhash

import (
	"reflect"

	"k8s.io/api/core/v1"

	v111 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v111/v1"
	v113 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v113/v1"
	v114 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v114/v1"
	v115 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v115/v1"
	v116 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v116/v1"
)

// schemas are the releases a node switches between on the road 1.11 ->
// 1.18, oldest first: the Container graph each hashes, by its go-spew dump
// up to 1.15 and by its JSON from 1.16. 1.9 .. 1.13 share 1.13's graph for
// containers without a securityContext, 1.12 and 1.13 for all (1.12 added
// SecurityContext.ProcMount), 1.16 .. 1.18 share 1.16's; a node may skip
// one minor (its kubelet two behind the API server), so every release of
// the window accepts every other's.
var schemas = []schema{
	{name: "1.11", typ: reflect.TypeOf(v111.Container{})},
	{name: "1.13", typ: reflect.TypeOf(v113.Container{})},
	{name: "1.14", typ: reflect.TypeOf(v114.Container{})},
	{name: "1.15", typ: reflect.TypeOf(v115.Container{})},
	{name: "1.16", typ: reflect.TypeOf(v116.Container{}), json: true},
}

// nativeName is the schema of the tree this is compiled into: the newest
// whose graph is this tree's v1.Container graph. One overlay serves every
// release of the window, so the release is read off its own types.
var nativeName = nativeOf(reflect.TypeOf(v1.Container{}))

func nativeOf(own reflect.Type) string {
	for i := len(schemas) - 1; i >= 0; i-- {
		if sameGraph(schemas[i].typ, own, map[[2]reflect.Type]bool{}) {
			return schemas[i].name
		}
	}
	return "" // init panics, naming the compiled-in schemas
}

// sameGraph reports whether a and b print alike under go-spew and
// encoding/json: the same kinds, type names as printed ("v1.Protocol":
// the package name, not its path), field names, tags and order, all the
// way down.
func sameGraph(a, b reflect.Type, seen map[[2]reflect.Type]bool) bool {
	if a == b {
		return true
	}
	if a.Kind() != b.Kind() || a.String() != b.String() {
		return false
	}
	if seen[[2]reflect.Type{a, b}] {
		return true
	}
	seen[[2]reflect.Type{a, b}] = true
	switch a.Kind() {
	case reflect.Struct:
		if a.NumField() != b.NumField() {
			return false
		}
		for i := 0; i < a.NumField(); i++ {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Name != fb.Name || fa.Tag != fb.Tag || !sameGraph(fa.Type, fb.Type, seen) {
				return false
			}
		}
	case reflect.Ptr, reflect.Slice, reflect.Array:
		return (a.Kind() != reflect.Array || a.Len() == b.Len()) && sameGraph(a.Elem(), b.Elem(), seen)
	case reflect.Map:
		return sameGraph(a.Key(), b.Key(), seen) && sameGraph(a.Elem(), b.Elem(), seen)
	}
	return true
}
