package v1

import v17meta "k8s.io/kubernetes/pkg/kubelet/legacytypes/v17/official/meta"

// Time is 1.7's (meta/v1's Time struct is the same in 1.8.15): go-spew
// prints it "(v1.Time){Time:(time.Time){sec:... nsec:... loc:...}}" as
// the official go1.8.3-built 1.8 kubelet did.
type Time = v17meta.Time
