// Package inf holds gopkg.in/inf.v0 decimals in the layout official
// go1.8.3-built kubelets (Kubernetes 1.7.x and 1.8.x) had, so that a
// go-spew dump made under a newer Go prints what they printed, and hashed,
// for a resource.Quantity held as an inf.Dec (container hash): inf.v0's
// own Dec and Scale (as vendored by 1.7.5 and 1.9.11, which are the same
// file) around go1.8.3's big.Int.
package inf

import (
	stdinf "gopkg.in/inf.v0"

	"k8s.io/kubernetes/pkg/kubelet/legacytypes/go18/big"
)

// Dec is inf.v0's Dec with go1.8.3's big.Int.
type Dec struct {
	unscaled big.Int
	scale    Scale
}

// Scale is inf.v0's Scale.
type Scale int32

// DecFrom copies d into go1.8.3's layout; nil gives nil. It only reads d
// (UnscaledBig and Scale return its fields).
func DecFrom(d *stdinf.Dec) *Dec {
	if d == nil {
		return nil
	}
	return &Dec{unscaled: big.IntFrom(d.UnscaledBig()), scale: Scale(d.Scale())}
}
