package v1

import "k8s.io/kubernetes/pkg/kubelet/legacytypes/go18/time"

// Time is apimachinery's meta/v1 Time (declared in its time.go, so not
// generated with the graph) holding go1.8.3's time.Time: go-spew prints
// "(v1.Time){Time:(time.Time){sec:... nsec:... loc:...}}" as the official
// 1.7 kubelet did.
type Time struct {
	time.Time
}
