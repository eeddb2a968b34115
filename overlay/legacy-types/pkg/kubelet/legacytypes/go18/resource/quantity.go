// Package resource holds resource.Quantity in the layout official
// go1.8.3-built kubelets (Kubernetes 1.7.x and 1.8.x) had, so that a
// go-spew dump made under a newer Go prints what they printed, and hashed,
// for it (container hash): apimachinery's own Quantity, int64Amount,
// infDecAmount, Scale and Format, around go1.8.3's inf.Dec and big.Int.
//
// 1.7.5's and 1.9.11's vendored apimachinery have the same Quantity
// layout (amount.go is the same file; quantity.go differs only in the
// openapi import, a deepcopy-gen tag and a comment), so one copy serves
// both trees.
package resource

import (
	"reflect"
	"unsafe"

	stdinf "gopkg.in/inf.v0"
	stdresource "k8s.io/apimachinery/pkg/api/resource"

	"k8s.io/kubernetes/pkg/kubelet/legacytypes/go18/inf"
)

// Quantity is apimachinery's Quantity with go1.8.3's inf.Dec.
type Quantity struct {
	i int64Amount
	d infDecAmount
	s string
	Format
}

// int64Amount is apimachinery's int64Amount.
type int64Amount struct {
	value int64
	scale Scale
}

// Scale is apimachinery's Scale.
type Scale int32

// infDecAmount is apimachinery's infDecAmount.
type infDecAmount struct {
	*inf.Dec
}

// Format is apimachinery's Format.
type Format string

// offsets of the tree's Quantity's unexported fields, found by name once
// (the kubelet hashes containers on every sync). Each field's type is
// checked, so a tree with another layout fails at start, not silently.
var offsets = func() (o struct{ value, scale, dec, s uintptr }) {
	q := reflect.TypeOf(stdresource.Quantity{})
	field := func(t reflect.Type, name string, kind reflect.Kind) reflect.StructField {
		f, ok := t.FieldByName(name)
		if !ok || f.Type.Kind() != kind {
			panic("go18 resource: " + t.String() + " has no " + kind.String() + " field " + name)
		}
		return f
	}
	i := field(q, "i", reflect.Struct)
	o.value = i.Offset + field(i.Type, "value", reflect.Int64).Offset
	o.scale = i.Offset + field(i.Type, "scale", reflect.Int32).Offset
	d := field(q, "d", reflect.Struct)
	dec := field(d.Type, "Dec", reflect.Ptr)
	if dec.Type != reflect.TypeOf((*stdinf.Dec)(nil)) || len(dec.Index) != 1 {
		panic("go18 resource: Quantity.d.Dec is not a *inf.Dec")
	}
	o.dec = d.Offset + dec.Offset
	o.s = field(q, "s", reflect.String).Offset
	return o
}()

// From copies q's internal state into go1.8.3's layout as it is: the
// int64 amount, the inf.Dec (nil stays nil), the cached string s (empty
// until something called String()) and Format. It reads the fields only:
// String(), AsDec() and friends fill caches and would change the dump.
func From(q stdresource.Quantity) Quantity {
	p := unsafe.Pointer(&q)
	return Quantity{
		i: int64Amount{
			value: *(*int64)(unsafe.Add(p, offsets.value)),
			scale: Scale(*(*int32)(unsafe.Add(p, offsets.scale))),
		},
		d:      infDecAmount{inf.DecFrom(*(**stdinf.Dec)(unsafe.Add(p, offsets.dec)))},
		s:      *(*string)(unsafe.Add(p, offsets.s)),
		Format: Format(q.Format),
	}
}
