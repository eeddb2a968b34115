package legacyuid

import (
	"reflect"

	v111 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v111/core"
	v112 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v112/core"
)

// 1.11.10 and 1.12.10 know 1.11's and 1.12's derivations: 1.12 adds
// PersistentVolumeClaimSpec.DataSource, PodSpec.RuntimeClassName and
// SecurityContext.ProcMount to the internal Pod graph, so every static pod
// without metadata.uid got another UID at 1.11 <-> 1.12. (Both graphs
// print metav1 from this tree, whose meta/v1 is 1.11's and 1.12's: they
// agree.) They replace the road's: 1.13's decoder defaults
// PodSpec.EnableServiceLinks, which these trees lack, so a pod decoded
// here and projected onto 1.13's graph or a later one is not the pod
// those kubelets hashed (config/static_uid_road_test.go).
func init() {
	Releases = []struct {
		Name string
		Pod  reflect.Type
	}{{"1.11", reflect.TypeOf(v111.Pod{})}, {"1.12", reflect.TypeOf(v112.Pod{})}}
}
