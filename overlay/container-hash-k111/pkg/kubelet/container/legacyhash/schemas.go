package legacyhash

import (
	"reflect"

	"k8s.io/api/core/v1"

	v111 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v111/v1"
	v113 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v113/v1"
	v114 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v114/v1"
	v115 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v115/v1"
	v116 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v116/v1"
	v17official "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/official/v1"
	v17 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/v1"
	v18official "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/official/v1"
	v18 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/v1"
	v19 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v19/v1"
)

// schemas are the releases a node switches between on the road 1.7 ->
// 1.18, oldest first: the Container graph each hashes, by its go-spew dump
// up to 1.15 and by its JSON from 1.16. 1.7 and 1.8 twice: as their
// official go1.8.3 builds print quantities held as inf.Dec and as a
// newer Go does ("+newergo": 1.7.5 and 1.8.15 rebuilt, as ours were
// before). 1.7 -> 1.8 changes the containers with a volume mount or a
// securityContext, 1.8 -> 1.9 every one (Container.VolumeDevices), 1.9 ->
// 1.10 those with a securityContext (RunAsGroup); 1.10's graph is 1.11's,
// 1.12's 1.13's (1.12 added SecurityContext.ProcMount), 1.16 .. 1.18
// share 1.16's. A container keeps the hash of the kubelet that started
// it across every later switch, and a node may skip one minor (its
// kubelet two behind the API server), so every release of the window
// accepts every other's.
var schemas = []schema{
	{name: "1.7", typ: reflect.TypeOf(v17official.Container{})},
	{name: "1.7+newergo", typ: reflect.TypeOf(v17.Container{})},
	{name: "1.8", typ: reflect.TypeOf(v18official.Container{})},
	{name: "1.8+newergo", typ: reflect.TypeOf(v18.Container{})},
	{name: "1.9", typ: reflect.TypeOf(v19.Container{})},
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
