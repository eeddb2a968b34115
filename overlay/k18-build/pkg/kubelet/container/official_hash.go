package container

import (
	"hash/fnv"
	"reflect"

	"k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes"
	hashutil "k8s.io/kubernetes/pkg/util/hash"

	v18official "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/official/v1"
)

var officialContainer = reflect.TypeOf(v18official.Container{})

// OfficialHash is the container hash the official 1.8 kubelet (go1.8.3)
// writes, and so what HashContainer returns in both variants of this
// build unless a fixes series changes it: fnv32a of c's dump with
// quantities held as inf.Dec in go1.8.3's math/big layout (Word was a
// uintptr, printed in hex), the rest as it is.
func OfficialHash(c *v1.Container) uint64 {
	h := fnv.New32a()
	hashutil.DeepHashObject(h, legacytypes.Project(c, officialContainer).Interface())
	return uint64(h.Sum32())
}
