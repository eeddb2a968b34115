package legacyhash

import (
	"reflect"

	"k8s.io/api/core/v1"
)

// Native names this kubelet's own schema: 1.9's v1.Container, which
// go1.9.3 (the official build) and this build print alike.
const Native = "native"

const nativeName = Native

// schemas, oldest first, this release's own last.
var schemas = append(go183Schemas[:len(go183Schemas):len(go183Schemas)], schema{Native, reflect.TypeOf(v1.Container{})})
