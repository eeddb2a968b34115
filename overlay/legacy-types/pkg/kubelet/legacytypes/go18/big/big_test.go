package big

import (
	stdbig "math/big"
	"testing"

	"github.com/davecgh/go-spew/spew"
)

// printer is the kubelet's hash printer (pkg/util/hash).
var printer = spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}

// The expected texts are what go1.8.3's big.Int printed through this
// go-spew: Word is a uintptr, so words print as hex, and a zero word as
// <nil> (go-spew's printHexPtr); a nil nat prints <nil>, an empty one [].
func TestIntFrom(t *testing.T) {
	twoTo64 := new(stdbig.Int).Lsh(stdbig.NewInt(1), 64)
	for _, c := range []struct {
		what string
		in   *stdbig.Int
		want string
	}{
		{"nil", nil, `(big.Int){neg:(bool)false abs:(big.nat)<nil>}`},
		{"zero, nil abs", new(stdbig.Int), `(big.Int){neg:(bool)false abs:(big.nat)<nil>}`},
		{"zero, empty abs", new(stdbig.Int).SetBits([]stdbig.Word{}), `(big.Int){neg:(bool)false abs:(big.nat)[]}`},
		{"15", stdbig.NewInt(15), `(big.Int){neg:(bool)false abs:(big.nat)[0xf]}`},
		{"1.5Gi", stdbig.NewInt(1610612736), `(big.Int){neg:(bool)false abs:(big.nat)[0x60000000]}`},
		{"2^64", twoTo64, `(big.Int){neg:(bool)false abs:(big.nat)[<nil> 0x1]}`},
		{"-(2^64+255)", new(stdbig.Int).Neg(new(stdbig.Int).Add(twoTo64, stdbig.NewInt(255))), `(big.Int){neg:(bool)true abs:(big.nat)[0xff 0x1]}`},
	} {
		if got := printer.Sprintf("%#v", IntFrom(c.in)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.what, got, c.want)
		}
	}
}

// The copy does not share x's words.
func TestIntFromCopies(t *testing.T) {
	x := stdbig.NewInt(7)
	v := IntFrom(x)
	x.SetInt64(9)
	if v.abs[0] != 7 {
		t.Errorf("copy changed with x: %v", v.abs)
	}
}
