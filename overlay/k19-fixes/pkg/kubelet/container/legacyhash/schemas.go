package legacyhash

import (
	"reflect"

	"k8s.io/api/core/v1"

	v110 "k8s.io/kubernetes/pkg/kubelet/legacytypes/v110/v1"
)

// Native names this kubelet's own schema: 1.9's v1.Container, which
// go1.9.3 (the official build) and this build print alike.
const Native = "native"

const nativeName = Native

// schemas, oldest first: 1.7's and 1.8's, this release's own, then
// 1.10's, whose kubelets a node may be switched back from (1.10 added
// SecurityContext.RunAsGroup: its hash of a container with a
// securityContext is not 1.9's). 1.10's graph is generated beside this
// file (make hash-schemas), as only this release uses it.
var schemas = append(go183Schemas[:len(go183Schemas):len(go183Schemas)],
	schema{Native, reflect.TypeOf(v1.Container{})},
	schema{"1.10", reflect.TypeOf(v110.Container{})})
