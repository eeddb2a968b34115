// Package legacyhash computes container hashes as the kubelets of 1.7 to
// 1.18 computed them, so switching a node's kubelet among them, up or
// down, does not kill and recreate its running containers.
//
// Kubelet stores HashContainer(container) on each container it starts and
// recreates the container when the hash of the desired spec differs. The
// hash is fnv32a over a go-spew dump of v1.Container up to 1.15 and over
// the dump of its JSON from 1.16 (kubernetes#57741), so it changes when a
// release adds a field to the Container type graph (1.8
// VolumeMount.MountPropagation, 1.9 Container.VolumeDevices, 1.10
// SecurityContext.RunAsGroup, 1.12 SecurityContext.ProcMount, 1.14
// VolumeMount.SubPathExpr, 1.15 SecurityContext.WindowsOptions) and for
// every container at 1.16, although nothing about the container changed.
// A pod's container spec is immutable in the API except its image, and a
// kubelet drops the fields it does not know when it decodes a pod; so the
// hash another kubelet stored is the hash of the spec projected onto that
// kubelet's schema. The schemas (generated from each release's own source)
// live in the legacy-types overlay (1.9's and 1.11's beside this package,
// in legacytypes/v19 and v111); schemas.go names the window's.
//
// This kubelet writes its own release's hash, so a later switch to that
// release's official kubelet recreates nothing; it accepts the hash of
// every release of the window. (Overlay container-hash does the same for
// 1.8 and 1.9 with 1.7's hash as the baseline; it stays as it is so the
// bytes of those kubelets do not change.)
package legacyhash

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"

	"k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
)

// schema is one release's Container type and how that release hashes it.
type schema struct {
	name string
	typ  reflect.Type
	// json: the release hashes the JSON of the container (1.16 and later,
	// kubernetes#57741) instead of the container itself.
	json bool
}

// native is this release's schema (first) followed by the window's
// others, oldest first: the order Compare tries them in.
var native, others = func() (schema, []schema) {
	i := index(nativeName)
	if i < 0 {
		panic(fmt.Sprintf("legacyhash: this tree's v1.Container is none of the compiled-in schemas %v", Schemas()))
	}
	return schemas[i], append(append([]schema{}, schemas[:i]...), schemas[i+1:]...)
}()

func index(name string) int {
	for i, s := range schemas {
		if s.name == name {
			return i
		}
	}
	return -1
}

// Native returns the name of this release's schema ("1.16" for 1.16 to
// 1.18, whose graphs and hashes agree).
func Native() string { return native.name }

// Schemas lists the compiled-in schemas, oldest first.
func Schemas() []string {
	var out []string
	for _, s := range schemas {
		out = append(out, s.name)
	}
	return out
}

// Hash returns the hash this kubelet writes for c: its own release's, as
// the vanilla kubelet of this release computes it.
func Hash(c *v1.Container) uint64 {
	return hashAs(c, native)
}

// HashAs returns the hash a kubelet of the named schema computes for c.
func HashAs(c *v1.Container, name string) (uint64, error) {
	i := index(name)
	if i < 0 {
		return 0, fmt.Errorf("unknown schema %q (have %v)", name, Schemas())
	}
	return hashAs(c, schemas[i]), nil
}

// Accepts reports whether a stored hash is that of c under any schema of
// the window.
func Accepts(c *v1.Container, stored uint64) bool {
	_, ok := Compare(c, stored)
	return ok
}

// Compare returns Hash(c) and whether stored is the hash of c under any
// schema of the window. This release's own is tried first and matches for
// the containers it and its vanilla kubelet made, so the common case costs
// one hash.
func Compare(c *v1.Container, stored uint64) (uint64, bool) {
	want := hashAs(c, native)
	if want == stored {
		return want, true
	}
	for _, s := range others {
		if hashAs(c, s) == stored {
			return want, true
		}
	}
	return want, false
}

func hashAs(c *v1.Container, s schema) uint64 {
	h := fnv.New32a()
	var obj interface{} = *c
	if s.typ != reflect.TypeOf(v1.Container{}) {
		obj = legacytypes.Project(c, s.typ).Interface()
	}
	if s.json {
		// As 1.16's HashContainer: the go-spew dump of the JSON bytes
		// (a marshal error, which the API types cannot produce, hashes
		// nil as upstream's does).
		data, _ := json.Marshal(obj)
		obj = data
	}
	hashutil.DeepHashObject(h, obj)
	return uint64(h.Sum32())
}
