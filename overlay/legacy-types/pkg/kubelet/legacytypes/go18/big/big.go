// Package big holds math/big integers in go1.8.3's layout, so that a
// go-spew dump made under a newer Go prints what official go1.8.3-built
// kubelets (Kubernetes 1.7.x and 1.8.x) printed, and hashed, for the
// big.Int inside a resource.Quantity held as an inf.Dec (container hash).
// go1.8.3's Word is a uintptr, which go-spew prints in hex (0 as <nil>);
// go1.9 made it a uint, printed in decimal.
package big

import (
	stdbig "math/big"
	"reflect"
	"unsafe"
)

// Word is go1.8.3's big.Word.
type Word uintptr

// nat is go1.8.3's big.nat: little-endian words, normalised.
type nat []Word

// Int is go1.8.3's big.Int.
type Int struct {
	neg bool
	abs nat
}

// negOffset is where math/big.Int keeps its sign flag, found by name once:
// Sign() reports 0 for a zero magnitude whatever the flag says, and
// go-spew prints the flag itself.
var negOffset = func() uintptr {
	f, ok := reflect.TypeOf(stdbig.Int{}).FieldByName("neg")
	if !ok || f.Type.Kind() != reflect.Bool {
		panic("go18 big: math/big.Int has no neg bool field")
	}
	return f.Offset
}()

// IntFrom copies x into go1.8.3's layout. The magnitude keeps being nil or
// empty as x's is (go-spew prints <nil> and [] respectively). A nil x gives
// the zero Int.
func IntFrom(x *stdbig.Int) Int {
	if x == nil {
		return Int{}
	}
	var v Int
	v.neg = *(*bool)(unsafe.Add(unsafe.Pointer(x), negOffset))
	if bits := x.Bits(); bits != nil {
		v.abs = make(nat, len(bits))
		for i, w := range bits {
			v.abs[i] = Word(w)
		}
	}
	return v
}
