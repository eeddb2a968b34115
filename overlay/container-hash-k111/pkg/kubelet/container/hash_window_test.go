package container

import (
	"math/rand"
	"testing"

	fuzz "github.com/google/gofuzz"
	"k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubernetes/pkg/kubelet/container/legacyhash"
)

// The schema legacyhash takes for this tree is the tree's own: on random
// containers its hash is what this tree's unpatched HashContainer
// computes (go-spew of the container up to 1.15, of its JSON from 1.16),
// which is what this kubelet writes; a container only this kubelet's
// vanilla build made is compared against the same hash.
func TestWindowNativeIsTheTreesOwnHash(t *testing.T) {
	f := fuzz.New().NilChance(0.3).NumElements(0, 2).RandSource(rand.NewSource(1318)).Funcs(
		func(q *resource.Quantity, c fuzz.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1<<20), resource.DecimalSI)
		},
	)
	for i := 0; i < 300; i++ {
		var c v1.Container
		f.Fuzz(&c)
		if got, want := legacyhash.Hash(&c), HashContainer(&c); got != want {
			t.Fatalf("container %d: legacyhash.Hash (schema %s) = %d, this tree's HashContainer %d", i, legacyhash.Native(), got, want)
		}
		if want, ok := ContainerHashAccepted(&c, HashContainer(&c)); !ok || want != HashContainer(&c) {
			t.Fatalf("container %d: its own hash is not accepted (%d, %v)", i, want, ok)
		}
	}
}
