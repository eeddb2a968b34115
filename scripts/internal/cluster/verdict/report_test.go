package verdict

import (
	"strings"
	"testing"
)

// A rehearsal whose pods all survived still fails when a node took longer
// than NotReadyBound to report Ready under a kubelet, never did, a kubelet
// exited, or a fault's prediction did not hold.
func TestPassedNeedsReadyNodes(t *testing.T) {
	ok := func() *Report {
		return &Report{
			Nodes: []NodeReport{{Name: "node-1", Readiness: []KubeletRun{
				{Kubelet: "1.13.12/patched", Ready: true, NotReadySeconds: 10.8, Faults: []string{"hang"}},
				{Kubelet: "1.12.10/vanilla", Ready: true, NotReadySeconds: 1.4},
			}}},
			Pods:   []PodReport{{Name: "web", Outcome: Kept, Predicted: Kept}},
			Faults: []Fault{{Kind: "hang", PredictionHeld: true}},
		}
	}
	r := ok()
	r.Finish()
	if !r.Passed() || r.Summary.SlowRuns != 0 || r.NotReadyBoundSeconds != 40 {
		t.Fatalf("every node Ready within the bound: passed %v, summary %+v", r.Passed(), r.Summary)
	}
	for name, spoil := range map[string]func(*Report){
		"over the bound": func(r *Report) { r.Nodes[0].Readiness[0].NotReadySeconds = 40.5 },
		"never Ready": func(r *Report) {
			r.Nodes[0].Readiness[0] = KubeletRun{Kubelet: "1.13.12/vanilla", NotReadySeconds: 12,
				Conditions: []ReadyCondition{{Status: "False", Reason: "KubeletNotReady", Message: "container runtime status check may not have completed yet", Seconds: 12}}}
		},
		"kubelet exit":         func(r *Report) { r.Nodes[0].KubeletExits = []KubeletExit{{Kubelet: "1.18.6/vanilla"}} },
		"prediction not borne": func(r *Report) { r.Faults[0].PredictionHeld = false },
	} {
		r := ok()
		spoil(r)
		r.Finish()
		if r.Passed() || len(r.Failures()) != 1 {
			t.Errorf("%s: passed %v, failures %q, summary %+v", name, r.Passed(), r.Failures(), r.Summary)
		}
	}
	r = ok()
	r.Nodes[0].Readiness[0] = KubeletRun{Kubelet: "1.13.12/vanilla", NotReadySeconds: 65.2, Faults: []string{"hang"},
		Conditions: []ReadyCondition{{Status: "False", Reason: "KubeletNotReady", Message: "container runtime status check may not have completed yet", Seconds: 65}}}
	r.Finish()
	if r.Summary.SlowRuns != 1 {
		t.Errorf("slow runs %d, want 1", r.Summary.SlowRuns)
	}
	line := r.Nodes[0].Readiness[0].String()
	for _, want := range []string{"NOT Ready in 65.2s", "bound 40s", "with fault hang", `"container runtime status check may not have completed yet" for 65s`} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
}

// A pod whose node never ran TO (the walk stopped at a kubelet exit) keeps
// the prediction made for TO, which is then neither held nor failed:
// untested, counted and shown as such, never a misprediction; the run
// still fails on the exit. A tested pod's miss still counts.
func TestUntestedPredictions(t *testing.T) {
	r := &Report{
		Nodes: []NodeReport{{Name: "node-1", KubeletExits: []KubeletExit{{Kubelet: "1.21.14/vanilla"}}}},
		Pods: []PodReport{
			{Name: "static-web-node-1", Node: "node-1", Outcome: Kept, Predicted: Replaced, Untested: "prediction untested: node node-1 never ran kubelet 1.21.14/vanilla to Ready"},
			{Name: "web", Node: "node-2", Outcome: Kept, Predicted: Kept, Untested: "prediction untested: the walk stopped before node node-2's switch"},
		},
	}
	r.Finish()
	if r.Summary.Mispredicted != 0 || r.Summary.Untested != 2 || r.Passed() {
		t.Errorf("summary %+v, passed %v: want 0 mispredicted, 2 untested, failed (the exit)", r.Summary, r.Passed())
	}
	var b strings.Builder
	r.WriteTable(&b)
	for _, want := range []string{"replaced (untested)", "never ran kubelet 1.21.14/vanilla to Ready", "0 mispredicted (2 predictions untested"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "MISPREDICTED") {
		t.Errorf("an untested prediction shown as a miss:\n%s", b.String())
	}
	r.Pods[0].Untested = ""
	r.Finish()
	if r.Summary.Mispredicted != 1 {
		t.Errorf("a tested miss: mispredicted %d, want 1", r.Summary.Mispredicted)
	}
}
