package legacyuid

import (
	"reflect"

	v112 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v112/core"
)

// 1.13.12 also knows 1.12's derivation, whose UID a pod that runs nowhere
// yet gets (versions.yaml uidBaseline): 1.13 defaults
// PodSpec.EnableServiceLinks, so every static pod without metadata.uid
// got another UID at 1.12 -> 1.13. (v112 prints metav1 from this tree,
// whose meta/v1 is 1.12's.)
func init() {
	Releases = append([]struct {
		Name string
		Pod  reflect.Type
	}{{"1.12", reflect.TypeOf(v112.Pod{})}}, Releases...)
}
