package main

import (
	"reflect"
	"slices"
	"testing"
)

// allCaps is a bounding set holding every capability capNames knows.
var allCaps = uint64(1)<<len(capNames) - 1

// noSysResource is this machine kind's bounding set: all but CAP_SYS_RESOURCE (24).
var noSysResource = allCaps &^ (1 << 24)

func TestClampCapsPrivileged(t *testing.T) {
	var all []any
	for _, n := range capNames {
		all = append(all, n)
	}
	in := []byte(`{"process":{"oomScoreAdj":0,"capabilities":{"bounding":` + jsonList(capNames) +
		`,"effective":` + jsonList(capNames) + `,"permitted":` + jsonList(capNames) +
		`,"inheritable":["CAP_SYS_RESOURCE","CAP_FUTURE_THING"],"ambient":null}}}`)
	out, changed, err := clamp(in, true, noSysResource)
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	caps := decode(t, out)["process"].(map[string]any)["capabilities"].(map[string]any)
	want := slices.DeleteFunc(slices.Clone(all), func(c any) bool { return c == "CAP_SYS_RESOURCE" })
	for _, set := range []string{"bounding", "effective", "permitted"} {
		if !reflect.DeepEqual(caps[set], want) {
			t.Errorf("%s: got %v", set, caps[set])
		}
	}
	// Unknown names are runc's to judge; null sets stay null.
	if got := caps["inheritable"]; !reflect.DeepEqual(got, []any{"CAP_FUTURE_THING"}) {
		t.Errorf("inheritable: got %v", got)
	}
	if got, ok := caps["ambient"]; !ok || got != nil {
		t.Errorf("ambient: got %v (present %v)", got, ok)
	}
}

func TestClampCapsWithinBoundsUntouched(t *testing.T) {
	for _, in := range []string{
		`{"process":{"capabilities":{"bounding":["CAP_CHOWN","CAP_KILL"],"effective":["CAP_KILL"]}}}`,
		`{"process":{"capabilities":null}}`,
	} {
		out, changed, err := clamp([]byte(in), true, noSysResource)
		if err != nil || changed || string(out) != in {
			t.Errorf("%s: out=%s changed=%v err=%v", in, out, changed, err)
		}
	}
	// With the capability in the bounding set nothing is dropped.
	in := `{"process":{"capabilities":{"bounding":["CAP_SYS_RESOURCE"]}}}`
	if out, changed, err := clamp([]byte(in), true, allCaps); err != nil || changed || string(out) != in {
		t.Errorf("out=%s changed=%v err=%v", out, changed, err)
	}
}

func TestClampCapsExecProcess(t *testing.T) {
	out, changed, err := clamp([]byte(`{"args":["sh"],"oomScoreAdj":-5,"capabilities":{"effective":["CAP_SYS_RESOURCE","CAP_NET_ADMIN"]}}`), false, noSysResource)
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	got := decode(t, out)
	if got["oomScoreAdj"] != float64(0) || !reflect.DeepEqual(got["capabilities"], map[string]any{"effective": []any{"CAP_NET_ADMIN"}}) {
		t.Fatalf("got %v", got)
	}
}

func TestClampCapsBadJSON(t *testing.T) {
	for _, in := range []string{
		`{"process":{"capabilities":["CAP_CHOWN"]}}`,
		`{"process":{"capabilities":{"bounding":"CAP_CHOWN"}}}`,
	} {
		if _, _, err := clamp([]byte(in), true, noSysResource); err == nil {
			t.Errorf("%s: want error", in)
		}
	}
}

func TestBoundingSet(t *testing.T) {
	bnd, err := boundingSet()
	if err != nil {
		t.Fatal(err)
	}
	// Every process holds CAP_CHOWN in its bounding set unless dropped on purpose.
	if bnd&1 == 0 {
		t.Fatalf("CapBnd %x lacks CAP_CHOWN", bnd)
	}
}

func jsonList(names []string) string {
	s := "["
	for i, n := range names {
		if i > 0 {
			s += ","
		}
		s += `"` + n + `"`
	}
	return s + "]"
}
