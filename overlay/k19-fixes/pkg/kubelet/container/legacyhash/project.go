package legacyhash

import (
	"reflect"
	"sync"
)

// Project copies src into a new value of type t field by field, by name,
// the way an older release's decoder would have filled its own type:
// fields t lacks are dropped, nil and empty slices and maps stay distinct
// (go-spew prints them differently), and types shared by both schemas
// (resource.Quantity, intstr.IntOrString) are copied as they are.
func Project(src interface{}, t reflect.Type) reflect.Value {
	dst := reflect.New(t).Elem()
	copyValue(dst, reflect.ValueOf(src).Elem())
	return dst
}

func copyValue(dst, src reflect.Value) {
	if dst.Type() == src.Type() {
		dst.Set(src)
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
