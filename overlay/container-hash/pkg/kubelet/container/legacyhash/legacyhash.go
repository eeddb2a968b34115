// Package legacyhash computes container hashes as older kubelets computed
// them, so a kubelet upgrade (or downgrade) does not kill and recreate
// every running container.
//
// Kubelet stores HashContainer(container) on each container it starts and
// recreates the container when the hash of the desired spec differs. The
// hash is fnv32a over a go-spew dump of v1.Container, so it changes
// whenever a release adds a field to the Container type graph, although
// nothing about the container changed: 1.8 added
// VolumeMount.MountPropagation (and SecurityContext.AllowPrivilegeEscalation),
// 1.9 added Container.VolumeDevices. A pod's container spec is immutable in
// the API except its image, and an older kubelet drops the fields it does
// not know when it decodes a pod; so the hash an older kubelet stored is
// the hash of the spec projected onto its own schema. The schemas
// (generated from each release's own source) live in the legacy-types
// overlay, each twice: as the official go1.8.3 build printed it and as a
// build by Go >= 1.9 prints it (they differ for quantities held as inf.Dec,
// e.g. 1.5Gi: math/big.Word was a uintptr in go1.8.3).
//
// This file is shared by every release the container-hash overlay serves
// (1.8, 1.9); each release's fixes overlay says, in schemas.go, which
// schemas it knows and which one is its own (nativeName).
package legacyhash

import (
	"fmt"
	"hash/fnv"
	"reflect"

	"k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes"
	hashutil "k8s.io/kubernetes/pkg/util/hash"

	v17official "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/official/v1"
	v17 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/v1"
	v18official "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/official/v1"
	v18 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/v1"
)

// schema is one release's Container type.
type schema struct {
	name string
	typ  reflect.Type
}

// go183Schemas are the releases whose official binaries go1.8.3 built,
// oldest first. A release's name is its official binary's; "+newergo" is
// the same release built by Go >= 1.9 (this toolchain's earlier 1.7
// builds, distribution rebuilds).
var go183Schemas = []schema{
	{"1.7", reflect.TypeOf(v17official.Container{})},
	{"1.7+newergo", reflect.TypeOf(v17.Container{})},
	{"1.8", reflect.TypeOf(v18official.Container{})},
	{"1.8+newergo", reflect.TypeOf(v18.Container{})},
}

// baseline is the schema whose hash this kubelet writes on the containers
// it creates. The build sets it from versions.yaml (hashBaseline) with
// -X; containers written with it survive a switch back to that release.
var baseline = "1.7"

// accepted are the schemas whose hash is accepted as "unchanged", in the
// order they are tried: the baseline first (what this kubelet and the
// baseline release write), then every schema from the baseline up to
// Native, so containers started by any release in between survive too.
var accepted []schema

func init() {
	i := index(baseline)
	if i < 0 {
		panic(fmt.Sprintf("legacyhash: baseline %q is not one of the compiled-in schemas %v", baseline, Schemas()))
	}
	if index(nativeName) < 0 {
		panic(fmt.Sprintf("legacyhash: this release's schema %q is not compiled in %v", nativeName, Schemas()))
	}
	accepted = append([]schema{schemas[i]}, schemas[i+1:]...)
}

func index(name string) int {
	for i, s := range schemas {
		if s.name == name {
			return i
		}
	}
	return -1
}

// Baseline returns the schema this kubelet writes hashes with.
func Baseline() string { return baseline }

// Schemas lists the compiled-in schemas, oldest first.
func Schemas() []string {
	var out []string
	for _, s := range schemas {
		out = append(out, s.name)
	}
	return out
}

// Hash returns the hash kubelet writes for c: the hash of c projected onto
// the baseline schema.
func Hash(c *v1.Container) uint64 {
	return hashAs(c, accepted[0])
}

// HashAs returns the hash a kubelet with the named schema computes for c.
func HashAs(c *v1.Container, name string) (uint64, error) {
	i := index(name)
	if i < 0 {
		return 0, fmt.Errorf("unknown schema %q (have %v)", name, Schemas())
	}
	return hashAs(c, schemas[i]), nil
}

// Accepts reports whether a stored hash is that of c under any accepted
// schema.
func Accepts(c *v1.Container, stored uint64) bool {
	_, ok := Compare(c, stored)
	return ok
}

// Compare returns Hash(c) and whether stored is the hash of c under any
// accepted schema. The baseline is tried first and usually matches, so
// the common case costs one hash.
func Compare(c *v1.Container, stored uint64) (uint64, bool) {
	want := hashAs(c, accepted[0])
	if want == stored {
		return want, true
	}
	for _, s := range accepted[1:] {
		if hashAs(c, s) == stored {
			return want, true
		}
	}
	return want, false
}

// NativeHash returns the hash of c under this release's own schema, as the
// vanilla kubelet of this release computes it.
func NativeHash(c *v1.Container) uint64 {
	return hashAs(c, schemas[index(nativeName)])
}

func hashAs(c *v1.Container, s schema) uint64 {
	h := fnv.New32a()
	if s.typ == reflect.TypeOf(v1.Container{}) {
		hashutil.DeepHashObject(h, *c)
	} else {
		hashutil.DeepHashObject(h, legacytypes.Project(c, s.typ).Interface())
	}
	return uint64(h.Sum32())
}
