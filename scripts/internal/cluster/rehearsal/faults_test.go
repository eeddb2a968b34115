package rehearsal

import (
	"slices"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/cluster/verdict"
	"kubelet-toolchain/scripts/internal/identity/podhash"
)

func TestParseFaults(t *testing.T) {
	for in, want := range map[string][]string{"": nil, "hang": {"hang"}, " hang ,": {"hang"}, "orphan,hang": {"orphan", "hang"}} {
		got, err := ParseFaults(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseFaults(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"flood": `unknown fault "flood" (known: hang, orphan)`, "hang,hang": `"hang" twice`} {
		if _, err := ParseFaults(in); err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "FAULTS="+in) {
			t.Errorf("ParseFaults(%q): error %v, want one naming FAULTS=%s and %s", in, err, in, msg)
		}
	}
}

// The preflight's words for the hung container are judged against the
// run: vanilla's "stays NotReady" holds only for a slow run, patched's
// "Ready" only within the bound; a container it did not name fails.
func TestHangPrediction(t *testing.T) {
	found := []podhash.HungContainer{{ID: "abc", Vanilla: "node stays NotReady", Patched: "node Ready"}, {ID: "shim", Vanilla: "node Ready (1.24+ ...)", Patched: "node Ready: ..."}}
	ready := verdict.KubeletRun{Ready: true, NotReadySeconds: 10.8}
	stuck := verdict.KubeletRun{NotReadySeconds: 65}
	for _, c := range []struct {
		v    matrix.Variant
		run  verdict.KubeletRun
		id   string
		want string
		held bool
	}{
		{matrix.Patched, ready, "abc", "node Ready", true},
		{matrix.Patched, stuck, "abc", "node Ready", false},
		{matrix.Vanilla, stuck, "abc", "node stays NotReady", true},
		{matrix.Vanilla, ready, "abc", "node stays NotReady", false},
		{matrix.Patched, ready, "other", "", false},
		// From 1.24 vanilla predicts a Ready node too (the stall is in
		// the relists): held when Ready.
		{matrix.Vanilla, ready, "shim", "node Ready (1.24+ ...)", true},
		{matrix.Vanilla, stuck, "shim", "node Ready (1.24+ ...)", false},
	} {
		got, held := hangPrediction(found, c.id, c.v, c.run)
		if got != c.want || held != c.held {
			t.Errorf("%s %s on %+v: %q %v, want %q %v", c.v, c.id, c.run, got, held, c.want, c.held)
		}
	}
}

// The orphan's prediction holds for vanilla only with the field report's
// exit, for patched only with the container removed and no exit.
func TestOrphanPrediction(t *testing.T) {
	found := []podhash.OrphanContainer{{ID: "abc", Vanilla: `the kubelet exits at start: "no PodsandBox found with Id" sb`, Patched: "the kubelet starts, and kills and removes the container"}}
	fieldExit := &verdict.KubeletExit{LastLines: []string{`F1128 kubelet.go:1383] Failed to start ContainerManager failed to build map of initial containers from runtime: no PodsandBox found with Id 'sb'`}}
	otherExit := &verdict.KubeletExit{LastLines: []string{"F1128 something else"}}
	for _, c := range []struct {
		v       matrix.Variant
		exit    *verdict.KubeletExit
		removed bool
		held    bool
	}{
		{matrix.Vanilla, fieldExit, false, true},
		{matrix.Vanilla, otherExit, false, false},
		{matrix.Vanilla, nil, true, false},
		{matrix.Patched, nil, true, true},
		{matrix.Patched, nil, false, false},
		{matrix.Patched, fieldExit, false, false},
	} {
		if _, held := orphanPrediction(found, "abc", c.v, c.exit, c.removed); held != c.held {
			t.Errorf("%s exit %v removed %v: held %v, want %v", c.v, c.exit, c.removed, held, c.held)
		}
	}
	if said, held := orphanPrediction(found, "other", matrix.Patched, nil, true); said != "" || held {
		t.Errorf("a container the preflight did not name: %q %v", said, held)
	}
}

// A node's pods are judged against the prediction only when TO's kubelet
// ran there to Ready: not when TO exited (its only run), nor on a node the
// walk never reached; a hung first run followed by a Ready one counts.
func TestUntested(t *testing.T) {
	rep := &verdict.Report{Nodes: []verdict.NodeReport{
		{Name: "node-1", Readiness: []verdict.KubeletRun{{Kubelet: "1.21.14/vanilla", NotReadySeconds: 8}}},
		{Name: "node-2", Readiness: []verdict.KubeletRun{
			{Kubelet: "1.23.17/vanilla", NotReadySeconds: 65},
			{Kubelet: "1.22.17/vanilla", Ready: true},
			{Kubelet: "1.23.17/vanilla", Ready: true},
		}},
		{Name: "node-4", Readiness: []verdict.KubeletRun{{Kubelet: "1.21.14/vanilla", Ready: true}}},
	}}
	on := untested(rep, "1.21.14/vanilla")
	if why := on("node-1"); !strings.Contains(why, "never ran kubelet 1.21.14/vanilla to Ready") {
		t.Errorf("node-1 (TO exited): %q", why)
	}
	if why := on("node-3"); !strings.Contains(why, "walk stopped before node node-3") {
		t.Errorf("node-3 (not reached): %q", why)
	}
	if why := on("node-4"); why != "" {
		t.Errorf("node-4 ran TO: %q", why)
	}
	if why := untested(rep, "1.23.17/vanilla")("node-2"); why != "" {
		t.Errorf("node-2 ran TO to Ready on its second run: %q", why)
	}
}
