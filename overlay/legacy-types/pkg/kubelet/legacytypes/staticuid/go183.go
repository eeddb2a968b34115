package staticuid

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"reflect"

	"k8s.io/kubernetes/pkg/kubelet/legacytypes"
	hashutil "k8s.io/kubernetes/pkg/util/hash"

	v17 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/api"
	v17official "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/official/api"
	v18 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/api"
	v18official "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/official/api"
)

// go183Lines are the minor lines whose official binaries go1.8.3 built,
// each with its internal Pod graph as that binary printed it (official)
// and as a build by Go >= 1.9 prints it (the release rebuilt by a newer
// Go: this toolchain's earlier 1.7 builds, distribution rebuilds). Both
// graphs are generated from the release's own tree (legacy-types).
var go183Lines = map[string][2]reflect.Type{
	"1.7": {reflect.TypeOf(v17official.Pod{}), reflect.TypeOf(v17.Pod{})},
	"1.8": {reflect.TypeOf(v18official.Pod{}), reflect.TypeOf(v18.Pod{})},
}

// Go183Derivations returns, for pod (a release's decoded internal pod,
// before applyDefaults), the UIDs the kubelets of lines derive: per line,
// the official binary's, then the newer-Go build's. A pod projected onto
// an older graph loses the fields that release lacks, as its decoder
// dropped them.
func Go183Derivations(pod interface{}, lines ...string) []Derivation {
	var ds []Derivation
	for _, line := range lines {
		graphs, ok := go183Lines[line]
		if !ok {
			panic(fmt.Sprintf("staticuid: no go1.8.3-era Pod graph for line %q", line))
		}
		ds = append(ds,
			Derivation{Name: "official " + line + " (go1.8.3)", UID: projectedUID(pod, graphs[0])},
			Derivation{Name: line + " built by Go >= 1.9", UID: projectedUID(pod, graphs[1])})
	}
	return ds
}

// projectedUID is the md5 applyDefaults takes of the pod's dump (the
// "host:"/"file:" lines it writes first never count: DeepHashObject
// resets the hasher).
func projectedUID(pod interface{}, t reflect.Type) string {
	h := md5.New()
	// A pointer, as applyDefaults passes it: spew prints "(*api.Pod)".
	hashutil.DeepHashObject(h, legacytypes.Project(pod, t).Addr().Interface())
	return hex.EncodeToString(h.Sum(nil))
}
