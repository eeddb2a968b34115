// Package legacytypes holds older releases' type graphs (generated from
// their own sources) and the official Go's runtime layouts (go18), and
// projects a value of this release onto them. A kubelet hashes go-spew
// dumps of its objects (container hashes, static pod UIDs, checkpoints),
// and go-spew prints type names, field order and the unexported fields of
// runtime types: projecting onto the graph an older or official kubelet
// compiled reproduces the bytes it hashed.
package legacytypes

import (
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	go18resource "k8s.io/kubernetes/pkg/kubelet/legacytypes/go18/resource"
	go18time "k8s.io/kubernetes/pkg/kubelet/legacytypes/go18/time"
)

// Project copies src into a new value of type t field by field, by name,
// the way an older release's decoder would have filled its own type:
// fields t lacks are dropped, nil and empty slices and maps stay distinct
// (go-spew prints them differently), types shared by both graphs
// (intstr.IntOrString, and resource.Quantity in a graph that keeps this
// Go's layout) are copied as they are, and runtime values are converted
// where the graph holds go1.8.3's layout of them.
func Project(src interface{}, t reflect.Type) reflect.Value {
	dst := reflect.New(t).Elem()
	copyValue(dst, reflect.ValueOf(src).Elem())
	return dst
}

// converters fill a go1.8.3-layout value from this Go's value. Keyed by
// (dst, src) type.
var converters = map[[2]reflect.Type]func(dst, src reflect.Value){
	{reflect.TypeOf(go18time.Time{}), reflect.TypeOf(time.Time{})}: func(dst, src reflect.Value) {
		// A location go1.8.3 could not have held (anything but UTC and
		// Local; decoding yields only those) keeps no location.
		t, _ := go18time.From(src.Interface().(time.Time))
		dst.Set(reflect.ValueOf(t))
	},
	{reflect.TypeOf(go18resource.Quantity{}), reflect.TypeOf(resource.Quantity{})}: func(dst, src reflect.Value) {
		dst.Set(reflect.ValueOf(go18resource.From(src.Interface().(resource.Quantity))))
	},
}

func copyValue(dst, src reflect.Value) {
	if dst.Type() == src.Type() {
		dst.Set(src)
		return
	}
	if convert, ok := converters[[2]reflect.Type{dst.Type(), src.Type()}]; ok {
		convert(dst, src)
		return
	}
	// A field that is a pointer in one release and a value in the other
	// (the internal EmptyDirVolumeSource.SizeLimit: a Quantity in 1.7, a
	// *Quantity in 1.9): the older decoder left the value zero where the
	// newer one leaves the pointer nil.
	if src.Kind() == reflect.Ptr && dst.Kind() != reflect.Ptr {
		if !src.IsNil() {
			copyValue(dst, src.Elem())
		}
		return
	}
	if dst.Kind() == reflect.Ptr && src.Kind() != reflect.Ptr {
		p := reflect.New(dst.Type().Elem())
		copyValue(p.Elem(), src)
		dst.Set(p)
		return
	}
	switch dst.Kind() {
	case reflect.Struct:
		for i, j := range fieldPlan(dst.Type(), src.Type()) {
			if j >= 0 {
				copyValue(dst.Field(i), src.Field(j))
			}
		}
	case reflect.Ptr:
		if !src.IsNil() {
			p := reflect.New(dst.Type().Elem())
			copyValue(p.Elem(), src.Elem())
			dst.Set(p)
		}
	case reflect.Slice:
		if !src.IsNil() {
			s := reflect.MakeSlice(dst.Type(), src.Len(), src.Len())
			for i := 0; i < src.Len(); i++ {
				copyValue(s.Index(i), src.Index(i))
			}
			dst.Set(s)
		}
	case reflect.Map:
		if !src.IsNil() {
			m := reflect.MakeMapWithSize(dst.Type(), src.Len())
			it := src.MapRange()
			for it.Next() {
				k := reflect.New(dst.Type().Key()).Elem()
				copyValue(k, it.Key())
				v := reflect.New(dst.Type().Elem()).Elem()
				copyValue(v, it.Value())
				m.SetMapIndex(k, v)
			}
			dst.Set(m)
		}
	default:
		// Named scalars (Protocol, PullPolicy, ...) differ only in package.
		dst.Set(src.Convert(dst.Type()))
	}
}

// plans caches, per (dst, src) struct type pair, the src field index for
// each dst field (-1: src lacks it); kubelet hashes every container on
// every pod sync, so FieldByName must not run each time.
var plans sync.Map

func fieldPlan(dst, src reflect.Type) []int {
	key := [2]reflect.Type{dst, src}
	if p, ok := plans.Load(key); ok {
		return p.([]int)
	}
	p := make([]int, dst.NumField())
	for i := range p {
		p[i] = -1
		if f, ok := src.FieldByName(dst.Field(i).Name); ok && len(f.Index) == 1 {
			p[i] = f.Index[0]
		}
	}
	plans.Store(key, p)
	return p
}
