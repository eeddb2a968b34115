package rehearsal

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/cluster/nodes"
	"kubelet-toolchain/scripts/internal/cluster/verdict"
)

// Options of one rehearsal.
type Options struct {
	UpOptions
	To      *matrix.Release
	Variant matrix.Variant
	// Manifests is a directory of the operator's own workloads; empty
	// applies the defaults (workloads/ and a static pod on the first node).
	Manifests string
	// Images are loaded into every node before the workloads start.
	Images []string
	// Settle is how long a node is watched after each switch, once it is
	// Ready under the new kubelet: the kubelet's periodic syncs (10 s) and
	// a liveness window (3 x 5 s) of every pod fit in it.
	Settle time.Duration
	// Faults are injected on the first node (ParseFaults).
	Faults []string
}

// Run brings the cluster up (or reuses it), starts the workloads, switches
// every node's kubelet FROM -> TO -> FROM -> TO in turn, and reports what
// happened to every pod. The error is for a rehearsal that could not be
// carried out; the report holds the verdict.
func Run(ctx context.Context, o Options) (*verdict.Report, error) {
	w, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if err := w.startWorkloads(ctx); err != nil {
		return nil, err
	}
	if err := w.startFaults(ctx); err != nil {
		return nil, err
	}
	if err := w.predict(ctx); err != nil {
		return nil, err
	}
	watch := w.watch(ctx)
	err = w.walk(ctx)
	w.faultsUnjudged()
	watch.stop()
	if err != nil {
		return nil, err
	}
	return w.judge(ctx, watch)
}

// rehearsal is one run under way: the cluster, the two kubelets it
// switches between, what was read before the first switch, and the
// report the walk fills.
type rehearsal struct {
	o         Options
	c         *Cluster
	log       func(string, ...any)
	from, to  kubelet
	recorders []*nodes.EventRecorder
	// baseline is every pod before the first switch (raw: as kubectl
	// printed it, for the preflight).
	baseline  map[string]verdict.PodState
	raw       []byte
	pred      *verdict.Predictor
	predicted verdict.Prediction
	faults    []fault
	rep       *verdict.Report
	started   time.Time
}

// kubelet is one side of the switch: a release's variant, its binary,
// and from 1.24 the standalone dockershim it runs on (the same variant of
// the shim release's).
type kubelet struct {
	r      *matrix.Release
	v      matrix.Variant
	binary string
	shim   *nodes.Shim // nil before 1.24; Args filled at each start
	// pause is the sandbox image the node's dockershim uses: the
	// release's own, or from 1.24 the shim release's.
	pause string
}

// label names it as the report does: "1.9.11/patched".
func (k kubelet) label() string { return k.r.Release + "/" + string(k.v) }

// start brings the cluster up with the images loaded and every node's
// kubelet on FROM: a reused cluster may have been left on another
// kubelet, or with none (one exited on a fault).
func start(ctx context.Context, o Options) (*rehearsal, error) {
	digest, err := WorkloadsDigest(o.Manifests, o.Images)
	if err != nil {
		return nil, err
	}
	o.UpOptions.Workloads = digest
	c, err := Up(ctx, o.UpOptions)
	if err != nil {
		return nil, err
	}
	w := &rehearsal{o: o, c: c, log: c.log}
	if w.to, err = kubeletFor(ctx, o.Matrix, o.To, o.Variant, o.Log); err != nil {
		return nil, err
	}
	if w.from, err = kubeletFor(ctx, o.Matrix, o.From, matrix.Vanilla, o.Log); err != nil {
		return nil, err
	}
	if err := c.LoadImages(ctx, o.Images); err != nil {
		return nil, err
	}
	for _, n := range c.Nodes {
		v, err := c.kubeletVersion(ctx, n.Name)
		pid, _, perr := n.Status(ctx)
		if err != nil || perr != nil || pid == 0 || v != o.From.GitVersion(matrix.Vanilla) {
			w.log("node %s runs %q (kubelet pid %d): back to FROM %s first", n.Name, v, pid, o.From.Release)
			if err := c.StartKubelet(ctx, n, w.from); err != nil {
				return nil, err
			}
		}
	}
	if err := c.WaitNodesReady(ctx, o.From, matrix.Vanilla, 3*time.Minute); err != nil {
		return nil, err
	}
	return w, nil
}

// startWorkloads applies the workloads, waits for them Ready, starts
// recording the nodes' engine events (dockerd keeps only its last 256 for
// a later --since) and reads the baseline.
func (w *rehearsal) startWorkloads(ctx context.Context) error {
	if err := w.c.applyWorkloads(ctx, w.o.Manifests); err != nil {
		return err
	}
	if err := w.c.recordWorkloads(w.o.UpOptions.Workloads); err != nil {
		return err
	}
	if err := w.c.waitPodsReady(ctx, "", 5*time.Minute); err != nil {
		return err
	}
	for _, n := range w.c.Nodes {
		r, err := n.RecordEvents(ctx)
		if err != nil {
			return err
		}
		w.recorders = append(w.recorders, r)
	}
	var err error
	if w.baseline, w.raw, err = w.c.Kubectl.Pods(ctx); err != nil {
		return err
	}
	w.started = time.Now()
	w.rep = &verdict.Report{From: w.o.From.Release, To: w.o.To.Release, Variant: string(w.o.Variant), Started: w.started.UTC().Format(time.RFC3339)}
	if v, err := w.c.Kubectl.Run(ctx, "version", "-o", "json"); err == nil {
		var ver struct {
			ServerVersion struct{ GitVersion string } `json:"serverVersion"`
		}
		if json.Unmarshal(v, &ver) == nil {
			w.rep.ControlPlane = ver.ServerVersion.GitVersion
		}
	}
	return nil
}

// close stops what the run started in this process: the faults' proxies,
// the event recorders.
func (w *rehearsal) close() {
	for _, f := range w.faults {
		f.close()
	}
	for _, r := range w.recorders {
		r.Stop()
	}
}

// endpoint is where node n's kubelet and the preflight reach its engine:
// through the hang's proxy on a hung node.
func (w *rehearsal) endpoint(n *nodes.Node) string {
	for _, f := range w.faults {
		if h, ok := f.(*hang); ok && h.node == n {
			sock, _ := n.FaultSocket()
			return "unix://" + sock
		}
	}
	return "unix://" + n.DockerSocket()
}

// predict runs the preflight on each node as FROM left it.
func (w *rehearsal) predict(ctx context.Context) error {
	w.pred = &verdict.Predictor{Matrix: w.o.Matrix, From: w.o.From, To: w.o.To, Variant: w.o.Variant, Log: w.o.Log, Dir: filepath.Join(w.c.Layout.Dir, "preflight")}
	w.predicted = verdict.Prediction{}
	for _, n := range w.c.Nodes {
		p, err := w.predictNode(ctx, n)
		if err != nil {
			return err
		}
		for k, v := range p {
			w.predicted[k] = v
		}
	}
	return nil
}

func (w *rehearsal) predictNode(ctx context.Context, n *nodes.Node) (verdict.Prediction, error) {
	return w.pred.Predict(ctx, n.Name, w.endpoint(n), w.raw, n.ManifestDir(), nodes.NodeManifestDir)
}

// watchers probe the workloads' ports and read their readiness while the
// kubelets are switched.
type watchers struct {
	prober *verdict.Prober
	ready  *verdict.Readiness
	cancel context.CancelFunc
	done   chan struct{}
}

func (w *rehearsal) watch(ctx context.Context) *watchers {
	watchCtx, cancel := context.WithCancel(ctx)
	ws := &watchers{
		prober: &verdict.Prober{Targets: w.c.probeTargets(), Interval: 250 * time.Millisecond, Log: w.log},
		ready:  &verdict.Readiness{Pods: w.c.Kubectl.Pods, Baseline: w.baseline, Interval: 2 * time.Second},
		cancel: cancel, done: make(chan struct{}, 2),
	}
	modes := ws.prober.Modes(ctx)
	go func() { ws.prober.Run(watchCtx, modes); ws.done <- struct{}{} }()
	go func() { ws.ready.Run(watchCtx); ws.done <- struct{}{} }()
	return ws
}

func (ws *watchers) stop() {
	ws.cancel()
	<-ws.done
	<-ws.done
}

// walk switches node after node FROM -> TO -> FROM -> TO, each node's
// report kept however its walk ended. A kubelet that exits ends the walk
// without an error: the verdict judges it.
func (w *rehearsal) walk(ctx context.Context) error {
	for _, n := range w.c.Nodes {
		nr, exited, err := w.walkNode(ctx, n)
		w.rep.Nodes = append(w.rep.Nodes, nr)
		if err != nil || exited {
			return err
		}
	}
	return nil
}

// walkNode switches one node; the faults on it are active for its first
// switch to TO.
func (w *rehearsal) walkNode(ctx context.Context, n *nodes.Node) (nr verdict.NodeReport, exited bool, err error) {
	nr = verdict.NodeReport{Name: n.Name}
	if v, err := w.c.kubeletVersion(ctx, n.Name); err == nil {
		nr.Kubelets = append(nr.Kubelets, v)
	}
	for i, k := range []kubelet{w.to, w.from, w.to} {
		var active []fault
		for _, f := range w.faults {
			if i == 0 && f.on() == n {
				active = append(active, f)
			}
		}
		if exited, err = w.switchKubelet(ctx, n, k, active, &nr); err != nil || exited {
			return nr, exited, err
		}
		v, err := w.c.kubeletVersion(ctx, n.Name)
		if err != nil {
			return nr, false, err
		}
		nr.Kubelets = append(nr.Kubelets, v)
	}
	return nr, false, nil
}

// switchKubelet starts kubelet k on n with the active faults armed,
// watches it to Ready (or its exit, or the bound), lets it settle, and
// judges the faults. A fault may keep the node from Ready: watched for
// the bound and a settle, then judged. Without one, a node not Ready in 3
// minutes means the rehearsal could not run.
func (w *rehearsal) switchKubelet(ctx context.Context, n *nodes.Node, k kubelet, active []fault, nr *verdict.NodeReport) (bool, error) {
	t := time.Now()
	var a armed
	var names []string
	for _, f := range active {
		fa, err := f.arm(ctx, w, k)
		if err != nil {
			return false, err
		}
		a.flags, names = append(a.flags, fa.flags...), append(names, f.name())
		if fa.dockerEndpoint != "" {
			a.dockerEndpoint = fa.dockerEndpoint
		}
	}
	w.log("node %s: switching to kubelet %s %s", n.Name, k.r.Release, k.v)
	run, err := w.c.startKubelet(ctx, n, k, a)
	if err != nil {
		return false, err
	}
	limit := 3 * time.Minute
	if len(active) > 0 {
		limit = verdict.NotReadyBound + w.o.Settle
	}
	kr, exit, err := w.c.watchKubeletRun(ctx, n, run, k.r.GitVersion(k.v), limit)
	kr.Kubelet, kr.Faults = k.label(), names
	nr.Readiness = append(nr.Readiness, kr)
	w.log("node %s: %s", n.Name, kr)
	switch {
	case exit != nil:
		exit.Kubelet = kr.Kubelet
		nr.KubeletExits = append(nr.KubeletExits, *exit)
		w.log("node %s: kubelet %s exited after %.0fs: %s", n.Name, exit.Kubelet, exit.AfterSeconds, strings.Join(exit.LastLines, " | "))
	case err != nil && len(active) == 0:
		return false, fmt.Errorf("node %s: %w", n.Name, err)
	}
	if kr.Ready {
		if err := w.settle(ctx, n, k, t, nr); err != nil {
			return false, err
		}
	}
	for _, f := range active {
		w.rep.Faults = append(w.rep.Faults, f.judge(ctx, w, switched{kr: kr, exit: exit, run: run, at: t}))
	}
	return exit != nil, nil
}

// settle waits for the node's pods Ready again (a switch that recreates
// containers needs them before the next; one slow to is judged as is),
// then watches the node for Settle.
func (w *rehearsal) settle(ctx context.Context, n *nodes.Node, k kubelet, t time.Time, nr *verdict.NodeReport) error {
	if err := w.c.waitPodsReady(ctx, n.Name, 3*time.Minute); err != nil {
		w.log("node %s: %v", n.Name, err)
	}
	nr.SwitchSeconds = append(nr.SwitchSeconds, verdict.Since(t))
	w.log("node %s: kubelet %s %s Ready after %.1fs; watching %s", n.Name, k.r.Release, k.v, verdict.Since(t), w.o.Settle)
	select { // Ctrl-C ends the watch at once
	case <-time.After(w.o.Settle):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// judge reads the pods after the walk and judges each against its
// baseline, its engine events and the preflight's prediction.
func (w *rehearsal) judge(ctx context.Context, ws *watchers) (*verdict.Report, error) {
	final, _, err := w.c.Kubectl.Pods(ctx)
	if err != nil {
		return nil, err
	}
	churn, err := w.churn(ctx)
	if err != nil {
		return nil, err
	}
	notReady, notReadySum := ws.ready.Seconds()
	untestedOn := untested(w.rep, w.to.label())
	for _, key := range verdict.SortedKeys(w.baseline) {
		b := w.baseline[key]
		var now *verdict.PodState
		if f, ok := final[key]; ok {
			now = &f
		}
		j := verdict.Judge(b, now, churn[b.UID])
		pr := verdict.PodReport{Namespace: b.Namespace, Name: b.Name, Node: b.Node, UID: b.UID, Outcome: j.Outcome, Restarts: j.Restarts, Detail: j.Why}
		switch pr.Predicted = w.predicted[key]; {
		case pr.Predicted != "":
		case b.Completed():
			// Nothing of it runs: a switch has nothing to recreate.
			pr.Predicted = verdict.Kept
		default:
			pr.Predicted = "unknown"
		}
		pr.NotReadySeconds = notReady[key]
		pr.Untested = untestedOn(b.Node)
		w.rep.Pods = append(w.rep.Pods, pr)
	}
	w.rep.Summary.NotReadySeconds = notReadySum
	if w.rep.Summary.APIErrors = ws.ready.Errors(); w.rep.Summary.APIErrors > 0 {
		w.log("readiness: %d API reads failed during the switches", w.rep.Summary.APIErrors)
	}
	var failures []string
	w.rep.Summary.Requests, w.rep.Summary.FailedRequests, failures = ws.prober.Counts()
	for _, f := range failures {
		w.log("prober: %s", f)
	}
	w.rep.Seconds = verdict.Since(w.started)
	w.rep.Finish()
	return w.rep, nil
}

// churn is what the engines saw happen to each pod's containers, by pod
// UID. A container the kubelet killed for its failed liveness probe is
// the workload's restart, not the switch's doing.
func (w *rehearsal) churn(ctx context.Context) (map[string]*verdict.PodChurn, error) {
	churn := map[string]*verdict.PodChurn{}
	for _, r := range w.recorders {
		evs, err := r.Stop()
		if err != nil {
			return nil, err
		}
		for uid, ch := range verdict.ChurnByPod(evs) {
			churn[uid] = ch
		}
	}
	w.recorders = nil // stopped
	apiEvents, err := w.c.Kubectl.Events(ctx)
	if err != nil {
		return nil, err
	}
	verdict.NoteLivenessKills(churn, apiEvents)
	return churn, nil
}
