package verdict

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"kubelet-toolchain/scripts/internal/fsutil"
)

// Report is _output/rehearsal/report.json: what happened to every pod.
type Report struct {
	From         string       `json:"from"`
	To           string       `json:"to"`
	Variant      string       `json:"variant"`
	ControlPlane string       `json:"controlPlane"`
	Nodes        []NodeReport `json:"nodes"`
	Pods         []PodReport  `json:"pods"`
	Summary      Summary      `json:"summary"`
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
}

// Summary counts the pods and what the workloads saw during the switches.
type Summary struct {
	Pods    int `json:"pods"`
	Kept    int `json:"kept"`
	Changed int `json:"changed"`
	// Mispredicted counts pods whose outcome is not what the preflight said.
	Mispredicted int `json:"mispredicted"`
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

// Passed: every pod kept (or restarted by itself), every prediction held,
// no request failed.
func (r *Report) Passed() bool {
	return r.Summary.Changed == 0 && r.Summary.Mispredicted == 0 && r.Summary.FailedRequests == 0
}

// Finish fills the summary from the pods.
func (r *Report) Finish() {
	s := &r.Summary
	s.Pods, s.Kept, s.Changed, s.Mispredicted = len(r.Pods), 0, 0, 0
	for _, p := range r.Pods {
		if p.Outcome == Kept || p.Outcome == Restarted {
			s.Kept++
		} else {
			s.Changed++
		}
		if !p.PredictionHeld() {
			s.Mispredicted++
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
	for _, n := range r.Nodes {
		fmt.Fprintf(w, "  node %s: %v\n", n.Name, n.Kubelets)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tPOD\tNODE\tOUTCOME\tPREDICTED\tRESTARTS\tNOT READY\tDETAIL")
	for _, p := range r.Pods {
		mark := ""
		if !p.PredictionHeld() {
			mark = " (MISPREDICTED)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\t%d\t%.0fs\t%s\n", p.Namespace, p.Name, p.Node, p.Outcome, p.Predicted, mark, p.Restarts, p.NotReadySeconds, p.Detail)
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
	fmt.Fprintf(w, "%s: %d pods, %d kept, %d changed, %d mispredicted; %.0f pod-seconds not Ready; %d of %d requests failed%s\n",
		verdict, s.Pods, s.Kept, s.Changed, s.Mispredicted, s.NotReadySeconds, s.FailedRequests, s.Requests, apiErrors)
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
		case !p.PredictionHeld():
			fail = fmt.Sprintf("%s, but the preflight predicted %s", p.Outcome, p.Predicted)
		}
		add(fmt.Sprintf("%s %s: pod %s/%s on %s is kept", r.Variant, r.To, p.Namespace, p.Name, p.Node), fail)
	}
	fail := ""
	if r.Summary.FailedRequests > 0 {
		fail = fmt.Sprintf("%d of %d requests failed during the switches", r.Summary.FailedRequests, r.Summary.Requests)
	}
	add("requests to the Service and host ports succeed during every switch", fail)
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
