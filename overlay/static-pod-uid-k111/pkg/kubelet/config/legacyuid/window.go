package legacyuid

import (
	"reflect"

	v110 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v110/core"
	v111 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v111/core"
	v112 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v112/core"
	v17 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/official/api"
	v18 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v18/official/api"
	v19 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v19/core"
)

// 1.10.13, 1.11.10 and 1.12.10 know the derivations of 1.7 to 1.12 in
// place of the road's: the internal Pod graph grows at every minor (1.8
// and 1.9 their fields, 1.9 also the package name core; 1.10
// ShareProcessNamespace and RunAsGroup; 1.11 ReadinessGates, Sysctls and
// the ServiceAccountToken projection; 1.12 RuntimeClassName, ProcMount and
// DataSource), so every static pod without metadata.uid got another UID at
// each switch. 1.7 and 1.8 as their official go1.8.3 binaries print them
// (legacy-types' official graphs, with their own meta/v1): what patched
// 1.9.11 gives a new pod. 1.7 and 1.8 rebuilt by a newer Go are known to
// patched 1.7.5 to 1.9.11 only. 1.9's to 1.12's graphs print metav1 from
// this tree: ObjectMeta and what it reaches are the same in 1.9 to 1.12.
// The road's derivations cannot come along: 1.13's decoder defaults
// PodSpec.EnableServiceLinks, which these trees lack, so a pod decoded
// here and projected onto 1.13's graph or a later one is not the pod those
// kubelets hashed (config/static_uid_road_test.go).
func init() {
	Releases = []struct {
		Name string
		Pod  reflect.Type
	}{
		{"1.7", reflect.TypeOf(v17.Pod{})},
		{"1.8", reflect.TypeOf(v18.Pod{})},
		{"1.9", reflect.TypeOf(v19.Pod{})},
		{"1.10", reflect.TypeOf(v110.Pod{})},
		{"1.11", reflect.TypeOf(v111.Pod{})},
		{"1.12", reflect.TypeOf(v112.Pod{})},
	}
}
