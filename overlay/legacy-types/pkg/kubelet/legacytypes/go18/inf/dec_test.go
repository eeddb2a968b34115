package inf

import (
	"testing"

	"github.com/davecgh/go-spew/spew"
	stdinf "gopkg.in/inf.v0"
)

// printer is the kubelet's hash printer (pkg/util/hash).
var printer = spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}

// The expected texts are what inf.v0's Dec around go1.8.3's big.Int
// printed through this go-spew (words in hex).
func TestDecFrom(t *testing.T) {
	for _, c := range []struct {
		what string
		in   *stdinf.Dec
		want string
	}{
		{"nil", nil, `(*inf.Dec)<nil>`},
		{"zero", new(stdinf.Dec), `(*inf.Dec){unscaled:(big.Int){neg:(bool)false abs:(big.nat)<nil>} scale:(inf.Scale)0}`},
		{"1.5", stdinf.NewDec(15, 1), `(*inf.Dec){unscaled:(big.Int){neg:(bool)false abs:(big.nat)[0xf]} scale:(inf.Scale)1}`},
		{"-5000", stdinf.NewDec(-5, -3), `(*inf.Dec){unscaled:(big.Int){neg:(bool)true abs:(big.nat)[0x5]} scale:(inf.Scale)-3}`},
	} {
		if got := printer.Sprintf("%#v", DecFrom(c.in)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.what, got, c.want)
		}
	}
}
