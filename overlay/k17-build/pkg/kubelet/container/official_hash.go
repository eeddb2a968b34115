package container

import (
	"reflect"

	"k8s.io/kubernetes/pkg/api/v1"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes"

	v17official "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/official/v1"
)

var officialContainer = reflect.TypeOf(v17official.Container{})

// asOfficial returns c as the official 1.7 kubelet (go1.8.3) dumps it for
// the container hash: quantities held as inf.Dec in go1.8.3's math/big
// layout (Word was a uintptr, printed in hex), the rest as it is.
func asOfficial(c *v1.Container) interface{} {
	return legacytypes.Project(c, officialContainer).Interface()
}
