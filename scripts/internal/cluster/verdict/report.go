package verdict

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
)

// Report is _output/rehearsal/report.json: what happened to every pod.
type Report struct {
	From         string `json:"from"`
	To           string `json:"to"`
	Variant      string `json:"variant"`
	ControlPlane string `json:"controlPlane"`
	// Faults are what the rehearsal injected (FAULTS), where and when.
	Faults []Fault      `json:"faults,omitempty"`
	Nodes  []NodeReport `json:"nodes"`
	Pods   []PodReport  `json:"pods"`
	// NotReadyBoundSeconds is how long a node may take, from a kubelet's
	// start, to report Ready under it (NotReadyBound).
	NotReadyBoundSeconds float64 `json:"notReadyBoundSeconds"`
	Summary              Summary `json:"summary"`
	// Started and Seconds time the rehearsal (cluster up excluded).
	Started string  `json:"started"`
	Seconds float64 `json:"seconds"`
}

// NodeReport names a node and the kubelets it ran, in order, as the node
// reported them to the API server (status.nodeInfo.kubeletVersion).
type NodeReport struct {
	Name     string   `json:"name"`
	Kubelets []string `json:"kubelets"`
	// SwitchSeconds is how long each switch took until the node was Ready
	// under the new kubelet.
	SwitchSeconds []float64 `json:"switchSeconds,omitempty"`
	// Readiness is each kubelet run's way to Ready, in order.
	Readiness []KubeletRun `json:"readiness,omitempty"`
	// KubeletExits are the kubelets that exited by themselves.
	KubeletExits []KubeletExit `json:"kubeletExits,omitempty"`
}

// NotReadyBound is how long a node may report anything but Ready after a
// kubelet's start before the switch counts as failed: the node
// controller's own patience with a silent kubelet (kube-controller-manager
// --node-monitor-grace-period, 40 s by default in 1.7..1.23). A plain
// switch here is Ready in 3-12 s; a patched kubelet on a hung container
// gives up on the inspect at its 10 s deadline.
const NotReadyBound = 40 * time.Second

// KubeletRun is one kubelet run's readiness, as the node reported it to
// the API server from the run's start.
type KubeletRun struct {
	Kubelet string `json:"kubelet"` // release/variant
	// NotReadySeconds runs from the kubelet's start until the node
	// reported Ready under it, or until the watch ended.
	NotReadySeconds float64 `json:"notReadySeconds"`
	Ready           bool    `json:"ready"`
	// Conditions are the Ready conditions the run posted, in order, each
	// with how long it was seen.
	Conditions []ReadyCondition `json:"conditions,omitempty"`
	// Faults names the faults active while it ran.
	Faults []string `json:"faults,omitempty"`
}

// ReadyCondition is one Ready condition a kubelet posted.
type ReadyCondition struct {
	Status  string  `json:"status"`
	Reason  string  `json:"reason,omitempty"`
	Message string  `json:"message,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Slow says the node took longer than NotReadyBound to report Ready under
// this kubelet, or never did.
func (k KubeletRun) Slow() bool {
	return !k.Ready || k.NotReadySeconds > NotReadyBound.Seconds()
}

// KubeletExit is a kubelet that exited by itself, with its last log lines.
type KubeletExit struct {
	Kubelet      string   `json:"kubelet"`
	AfterSeconds float64  `json:"afterSeconds"`
	LastLines    []string `json:"lastLines"`
}

// Fault is one injected fault.
type Fault struct {
	Kind string `json:"kind"` // hang
	Node string `json:"node"`
	// Pod (namespace/name) and Container name the container it was
	// injected on; ContainerID is its engine id.
	Pod         string `json:"pod"`
	Container   string `json:"container"`
	ContainerID string `json:"containerID"`
	// While says when it was active.
	While string `json:"while"`
	// Held counts the requests the fault held (hang).
	Held int `json:"held,omitempty"`
	// Predicted is what the preflight, run before the first switch, said
	// TO's kubelet would do on it ("" if it did not name the container);
	// PredictionHeld whether that happened.
	Predicted      string `json:"predicted"`
	PredictionHeld bool   `json:"predictionHeld"`
}

// PodReport is one pod of the baseline.
type PodReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	UID       string `json:"uid"`
	Outcome   string `json:"outcome"`
	// Predicted is the preflight's verdict for the pod (kept, recreated,
	// replaced), or "unknown" where it has none.
	Predicted string `json:"predicted"`
	Restarts  int    `json:"restarts"`
	// NotReadySeconds is how long the pod was seen not Ready during the
	// switches. Every kubelet restart, even to the same release, reports a
	// pod with a readiness probe not Ready until the probe first passes
	// again (kubernetes/kubernetes#78733, #100277): this is that window.
	NotReadySeconds float64 `json:"notReadySeconds"`
	Detail          string  `json:"detail,omitempty"`
	// Untested says why the prediction was never put to the test: the
	// pod's node never ran TO's kubelet (the walk stopped before it, or
	// TO exited at start), so what TO would do to the pod did not happen.
	Untested string `json:"untested,omitempty"`
}

// Summary counts the pods and what the workloads saw during the switches.
type Summary struct {
	Pods    int `json:"pods"`
	Kept    int `json:"kept"`
	Changed int `json:"changed"`
	// Mispredicted counts pods whose outcome is not what the preflight said.
	Mispredicted int `json:"mispredicted"`
	// Untested counts pods whose prediction was never put to the test.
	Untested int `json:"untested,omitempty"`
	// NotReadySeconds sums, over pods, the seconds each was seen not
	// Ready while the kubelets were being switched.
	NotReadySeconds float64 `json:"notReadySeconds"`
	// FailedRequests and Requests count the prober's requests to the
	// Service and the host ports during the switches.
	FailedRequests int `json:"failedRequests"`
	Requests       int `json:"requests"`
	// APIErrors counts the readiness watcher's API reads that failed
	// during the switches (their moments are not in NotReadySeconds).
	APIErrors int `json:"apiErrors"`
	// SlowRuns counts kubelet runs whose node was not Ready within
	// NotReadyBound; KubeletExits the kubelets that exited by themselves.
	SlowRuns     int `json:"slowRuns"`
	KubeletExits int `json:"kubeletExits"`
}

// PredictionHeld says whether a pod's outcome is what was predicted. A
// restart is the workload's doing, which no preflight predicts: it holds
// against "kept".
func (p PodReport) PredictionHeld() bool {
	o := p.Outcome
	if o == Restarted {
		o = Kept
	}
	return o == p.Predicted
}

// Mispredicted: the pod's prediction was put to the test and failed it.
func (p PodReport) Mispredicted() bool { return p.Untested == "" && !p.PredictionHeld() }

// Passed: every pod kept (or restarted by itself), every prediction held,
// no request failed, every node Ready within NotReadyBound of each kubelet
// start, no kubelet exited.
func (r *Report) Passed() bool { return len(r.Failures()) == 0 }

// Failures says, one item per kind, why the rehearsal did not pass.
func (r *Report) Failures() []string {
	s := r.Summary
	var out []string
	add := func(n int, what string) {
		if n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Changed, "pods changed")
	add(s.Mispredicted, "pods not as predicted")
	add(s.FailedRequests, "requests failed")
	add(s.SlowRuns, fmt.Sprintf("kubelet runs not Ready within %.0fs", NotReadyBound.Seconds()))
	add(s.KubeletExits, "kubelet exits")
	for _, f := range r.Faults {
		if !f.PredictionHeld {
			out = append(out, fmt.Sprintf("fault %s on node %s: the preflight's prediction did not hold", f.Kind, f.Node))
		}
	}
	return out
}

// Finish fills the summary from the pods.
func (r *Report) Finish() {
	s := &r.Summary
	s.Pods, s.Kept, s.Changed, s.Mispredicted, s.Untested, s.SlowRuns, s.KubeletExits = len(r.Pods), 0, 0, 0, 0, 0, 0
	r.NotReadyBoundSeconds = NotReadyBound.Seconds()
	for _, n := range r.Nodes {
		for _, k := range n.Readiness {
			if k.Slow() {
				s.SlowRuns++
			}
		}
		s.KubeletExits += len(n.KubeletExits)
	}
	for _, p := range r.Pods {
		if p.Outcome == Kept || p.Outcome == Restarted {
			s.Kept++
		} else {
			s.Changed++
		}
		if p.Mispredicted() {
			s.Mispredicted++
		}
		if p.Untested != "" {
			s.Untested++
		}
	}
}

// Write stores the report as JSON (temp -> rename).
func (r *Report) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// WriteTable prints the pods and the summary for a person.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "rehearsal %s -> %s (%s), control plane %s\n", r.From, r.To, r.Variant, r.ControlPlane)
	for _, f := range r.Faults {
		held := "held"
		if !f.PredictionHeld {
			held = "DID NOT HOLD"
		}
		requests := ""
		if f.Held > 0 {
			requests = fmt.Sprintf("; %d requests held", f.Held)
		}
		fmt.Fprintf(w, "  fault %s on node %s: %s container %s (%.12s) %s%s; preflight predicted %q: %s\n", f.Kind, f.Node, f.Pod, f.Container, f.ContainerID, f.While, requests, f.Predicted, held)
	}
	for _, n := range r.Nodes {
		fmt.Fprintf(w, "  node %s: %v\n", n.Name, n.Kubelets)
		for _, k := range n.Readiness {
			fmt.Fprintf(w, "    %s\n", k)
		}
		for _, e := range n.KubeletExits {
			fmt.Fprintf(w, "    kubelet %s EXITED after %.0fs: %s\n", e.Kubelet, e.AfterSeconds, strings.Join(e.LastLines, " | "))
		}
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tPOD\tNODE\tOUTCOME\tPREDICTED\tRESTARTS\tNOT READY\tDETAIL")
	for _, p := range r.Pods {
		mark, detail := "", p.Detail
		switch {
		case p.Untested != "":
			mark = " (untested)"
			detail = strings.TrimPrefix(detail+"; "+p.Untested, "; ")
		case !p.PredictionHeld():
			mark = " (MISPREDICTED)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\t%d\t%.0fs\t%s\n", p.Namespace, p.Name, p.Node, p.Outcome, p.Predicted, mark, p.Restarts, p.NotReadySeconds, detail)
	}
	tw.Flush()
	s := r.Summary
	verdict := "PASSED"
	if !r.Passed() {
		verdict = "FAILED"
	}
	apiErrors := ""
	if s.APIErrors > 0 {
		apiErrors = fmt.Sprintf("; %d API reads failed (readiness not sampled then)", s.APIErrors)
	}
	untested := ""
	if s.Untested > 0 {
		untested = fmt.Sprintf(" (%d predictions untested: the walk stopped first)", s.Untested)
	}
	fmt.Fprintf(w, "%s: %d pods, %d kept, %d changed, %d mispredicted%s; %.0f pod-seconds not Ready; %d of %d requests failed%s; %d kubelet runs not Ready within %.0fs, %d kubelet exits\n",
		verdict, s.Pods, s.Kept, s.Changed, s.Mispredicted, untested, s.NotReadySeconds, s.FailedRequests, s.Requests, apiErrors, s.SlowRuns, NotReadyBound.Seconds(), s.KubeletExits)
}

// JUnit: one test case per pod, plus readiness and requests.
type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Class   string        `xml:"classname,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit stores the report as a JUnit file.
func (r *Report) WriteJUnit(path string) error {
	suite := junitSuite{Name: fmt.Sprintf("rehearsal %s -> %s %s", r.From, r.To, r.Variant), Time: fmt.Sprintf("%.1f", r.Seconds)}
	add := func(name string, fail string) {
		c := junitCase{Name: name, Class: "rehearsal"}
		if fail != "" {
			c.Failure = &junitFailure{Message: fail, Text: fail}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	for _, p := range r.Pods {
		fail := ""
		switch {
		case p.Outcome != Kept && p.Outcome != Restarted:
			fail = fmt.Sprintf("%s (predicted %s): %s", p.Outcome, p.Predicted, p.Detail)
		case p.Mispredicted():
			fail = fmt.Sprintf("%s, but the preflight predicted %s", p.Outcome, p.Predicted)
		}
		add(fmt.Sprintf("%s %s: pod %s/%s on %s is kept", r.Variant, r.To, p.Namespace, p.Name, p.Node), fail)
	}
	fail := ""
	if r.Summary.FailedRequests > 0 {
		fail = fmt.Sprintf("%d of %d requests failed during the switches", r.Summary.FailedRequests, r.Summary.Requests)
	}
	add("requests to the Service and host ports succeed during every switch", fail)
	for _, n := range r.Nodes {
		for i, k := range n.Readiness {
			fail := ""
			if k.Slow() {
				fail = k.String()
			}
			add(fmt.Sprintf("node %s Ready within %.0fs of kubelet run %d (%s)", n.Name, NotReadyBound.Seconds(), i+1, k.Kubelet), fail)
		}
		for _, e := range n.KubeletExits {
			add(fmt.Sprintf("node %s: kubelet %s keeps running", n.Name, e.Kubelet), fmt.Sprintf("exited after %.0fs: %s", e.AfterSeconds, strings.Join(e.LastLines, "\n")))
		}
	}
	for _, f := range r.Faults {
		fail := ""
		if !f.PredictionHeld {
			fail = fmt.Sprintf("the preflight predicted %q", f.Predicted)
		}
		add(fmt.Sprintf("fault %s on node %s (%s/%s): the preflight's prediction holds", f.Kind, f.Node, f.Pod, f.Container), fail)
	}
	suite.Tests = len(suite.Cases)
	b, err := xml.MarshalIndent(suite, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, append([]byte(xml.Header), b...), 0o644)
}

// Since is seconds since t, rounded to 0.1.
func Since(t time.Time) float64 {
	return float64(time.Since(t).Round(100*time.Millisecond)) / float64(time.Second)
}

// String is a run's readiness in one line: how long to Ready, and the
// conditions it posted on the way.
func (k KubeletRun) String() string {
	var b strings.Builder
	if k.Ready {
		fmt.Fprintf(&b, "kubelet %s: Ready after %.1fs", k.Kubelet, k.NotReadySeconds)
	} else {
		fmt.Fprintf(&b, "kubelet %s: NOT Ready in %.1fs", k.Kubelet, k.NotReadySeconds)
	}
	if k.Slow() {
		fmt.Fprintf(&b, " (bound %.0fs)", NotReadyBound.Seconds())
	}
	if len(k.Faults) > 0 {
		fmt.Fprintf(&b, " with fault %s", strings.Join(k.Faults, ","))
	}
	for _, c := range k.Conditions {
		if c.Status == "True" {
			continue
		}
		fmt.Fprintf(&b, "; Ready=%s %s %q for %.0fs", c.Status, c.Reason, c.Message, c.Seconds)
	}
	return b.String()
}
