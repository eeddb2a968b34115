package rehearsal

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/cluster/nodes"
	"kubelet-toolchain/scripts/internal/cluster/verdict"
	"kubelet-toolchain/tools/poll"
)

//go:embed workloads/*.yaml
var defaultWorkloads embed.FS

//go:embed static/*.yaml
var defaultStatic embed.FS

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
	digest, err := WorkloadsDigest(o.Manifests, o.Images)
	if err != nil {
		return nil, err
	}
	o.UpOptions.Workloads = digest
	c, err := Up(ctx, o.UpOptions)
	if err != nil {
		return nil, err
	}
	log := c.log
	toKubelet, err := kubeletFor(ctx, o.Matrix, o.To, o.Variant, o.Log)
	if err != nil {
		return nil, err
	}
	fromKubelet, err := kubeletFor(ctx, o.Matrix, o.From, matrix.Vanilla, o.Log)
	if err != nil {
		return nil, err
	}
	if err := c.LoadImages(ctx, o.Images); err != nil {
		return nil, err
	}
	// A reused cluster may have been left on another kubelet, or with
	// none (one exited on a fault): every node starts the rehearsal on FROM.
	for _, n := range c.Nodes {
		v, err := c.kubeletVersion(ctx, n.Name)
		pid, _, perr := n.Status(ctx)
		if err != nil || perr != nil || pid == 0 || v != o.From.GitVersion(matrix.Vanilla) {
			log("node %s runs %q (kubelet pid %d): back to FROM %s first", n.Name, v, pid, o.From.Release)
			if err := c.StartKubelet(ctx, n, o.From, matrix.Vanilla, fromKubelet); err != nil {
				return nil, err
			}
		}
	}
	if err := c.WaitNodesReady(ctx, o.From, matrix.Vanilla, 3*time.Minute); err != nil {
		return nil, err
	}
	if err := c.applyWorkloads(ctx, o.Manifests); err != nil {
		return nil, err
	}
	if err := c.recordWorkloads(digest); err != nil {
		return nil, err
	}
	if err := c.waitPodsReady(ctx, "", 5*time.Minute); err != nil {
		return nil, err
	}
	// The nodes' engine events, streamed from before the baseline (dockerd
	// keeps only its last 256 for a later --since).
	var recorders []*nodes.EventRecorder
	defer func() {
		for _, r := range recorders {
			r.Stop()
		}
	}()
	for _, n := range c.Nodes {
		r, err := n.RecordEvents(ctx)
		if err != nil {
			return nil, err
		}
		recorders = append(recorders, r)
	}
	baseline, raw, err := c.Kubectl.Pods(ctx)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	rep := &verdict.Report{From: o.From.Release, To: o.To.Release, Variant: string(o.Variant), Started: started.UTC().Format(time.RFC3339)}
	if v, err := c.Kubectl.Run(ctx, "version", "-o", "json"); err == nil {
		var ver struct {
			ServerVersion struct{ GitVersion string } `json:"serverVersion"`
		}
		if json.Unmarshal(v, &ver) == nil {
			rep.ControlPlane = ver.ServerVersion.GitVersion
		}
	}

	// The hang is in place before the first switch to TO; the preflight
	// reads that node through it, as its kubelet will.
	var hung *hang
	if slices.Contains(o.Faults, FaultHang) {
		if hung, err = c.startHang(c.Nodes[0], baseline); err != nil {
			return nil, err
		}
		defer hung.close()
	}
	// The orphan's pod runs from before the first switch; it becomes the
	// orphan while that switch has the kubelet stopped.
	var orph *orphan
	if slices.Contains(o.Faults, FaultOrphan) {
		if orph, err = c.startOrphanPod(ctx, c.Nodes[0]); err != nil {
			return nil, err
		}
	}
	endpoint := func(n *nodes.Node) string {
		if hung != nil && hung.node == n {
			sock, _ := n.FaultSocket()
			return "unix://" + sock
		}
		return "unix://" + n.DockerSocket()
	}

	// The preflight's verdicts, from each node as FROM left it.
	pred := &verdict.Predictor{Matrix: o.Matrix, From: o.From, To: o.To, Variant: o.Variant, Log: o.Log, Dir: filepath.Join(c.Layout.Dir, "preflight")}
	predicted := verdict.Prediction{}
	for _, n := range c.Nodes {
		p, err := pred.Predict(ctx, n.Name, endpoint(n), raw, n.ManifestDir(), nodes.NodeManifestDir)
		if err != nil {
			return nil, err
		}
		for k, v := range p {
			predicted[k] = v
		}
	}

	// Watch the workloads while the kubelets are switched.
	watchCtx, stopWatch := context.WithCancel(ctx)
	prober := &verdict.Prober{Targets: c.probeTargets(), Interval: 250 * time.Millisecond, Log: log}
	modes := prober.Modes(ctx)
	ready := &verdict.Readiness{Pods: c.Kubectl.Pods, Baseline: baseline, Interval: 2 * time.Second}
	done := make(chan struct{}, 2)
	go func() { prober.Run(watchCtx, modes); done <- struct{}{} }()
	go func() { ready.Run(watchCtx); done <- struct{}{} }()

	kubelets := map[string]string{o.From.Release + "/vanilla": fromKubelet, o.To.Release + "/" + string(o.Variant): toKubelet}
	plan := []struct {
		r *matrix.Release
		v matrix.Variant
	}{{o.To, o.Variant}, {o.From, matrix.Vanilla}, {o.To, o.Variant}}
	var switchErr error
	exited := false
	var nr verdict.NodeReport // the node being walked
walk:
	for _, n := range c.Nodes {
		nr = verdict.NodeReport{Name: n.Name}
		if v, err := c.kubeletVersion(ctx, n.Name); err == nil {
			nr.Kubelets = append(nr.Kubelets, v)
		}
		for i, s := range plan {
			// The hang holds through the first TO phase of its node; the
			// orphan is made with the kubelet stopped for that switch, and
			// the preflight run again there, as an operator would.
			var extra, active []string
			hanging := hung != nil && hung.node == n && i == 0
			orphaning := orph != nil && orph.node == n && i == 0
			if hanging {
				extra, active = hung.kubeletFlags(), append(active, FaultHang)
			}
			t := time.Now()
			if orphaning {
				active = append(active, FaultOrphan)
				if _, err := n.StopKubelet(ctx); err != nil {
					switchErr = err
					break walk
				}
				if switchErr = orph.make(ctx, c); switchErr != nil {
					break walk
				}
				if _, switchErr = pred.Predict(ctx, n.Name, endpoint(n), raw, n.ManifestDir(), nodes.NodeManifestDir); switchErr != nil {
					break walk
				}
			}
			faulted := hanging || orphaning
			log("node %s: switching to kubelet %s %s", n.Name, s.r.Release, s.v)
			run, err := c.startKubelet(ctx, n, s.r, s.v, kubelets[s.r.Release+"/"+string(s.v)], extra...)
			if err != nil {
				switchErr = err
				break walk
			}
			// A fault may keep the node from Ready: watched for the bound
			// and a settle, then judged. Without one, a node not Ready in
			// 3 minutes means the rehearsal could not run.
			limit := 3 * time.Minute
			if faulted {
				limit = verdict.NotReadyBound + o.Settle
			}
			kr, exit, err := c.watchKubeletRun(ctx, n, run, s.r.GitVersion(s.v), limit)
			kr.Kubelet, kr.Faults = s.r.Release+"/"+string(s.v), active
			nr.Readiness = append(nr.Readiness, kr)
			log("node %s: %s", n.Name, kr)
			switch {
			case exit != nil:
				exit.Kubelet = kr.Kubelet
				nr.KubeletExits = append(nr.KubeletExits, *exit)
				log("node %s: kubelet %s exited after %.0fs: %s", n.Name, exit.Kubelet, exit.AfterSeconds, strings.Join(exit.LastLines, " | "))
				exited = true
			case err != nil && !faulted:
				switchErr = fmt.Errorf("node %s: %w", n.Name, err)
			}
			if switchErr != nil {
				break walk
			}
			if kr.Ready {
				// A switch that recreates containers needs its pods Ready
				// again before the next one; one that is slow to is judged
				// as is.
				if err := c.waitPodsReady(ctx, n.Name, 3*time.Minute); err != nil {
					log("node %s: %v", n.Name, err)
				}
				nr.SwitchSeconds = append(nr.SwitchSeconds, verdict.Since(t))
				log("node %s: kubelet %s %s Ready after %.1fs; watching %s", n.Name, s.r.Release, s.v, verdict.Since(t), o.Settle)
				select { // Ctrl-C ends the watch at once
				case <-time.After(o.Settle):
				case <-ctx.Done():
					switchErr = ctx.Err()
					break walk
				}
			}
			if hanging {
				f := hung.free()
				f.While = fmt.Sprintf("from before the switch to %s until its phase was watched (%.0fs)", kr.Kubelet, verdict.Since(t))
				f.Predicted, f.PredictionHeld = hangPrediction(pred.Hung, f.ContainerID, o.Variant, kr)
				rep.Faults = append(rep.Faults, f)
				log("fault %s freed on node %s: %d inspect requests were held", FaultHang, n.Name, f.Held)
			}
			if orphaning {
				// A kubelet that tolerates the orphan removes it; one that
				// exited on it leaves it to the rehearsal, which made it.
				removed := false
				if exit == nil {
					took, err := orph.gone(ctx, OrphanGoneBound)
					removed = err == nil
					orph.fault.While = fmt.Sprintf("made with the kubelet stopped for the switch to %s; removed by it %.0fs after its start", kr.Kubelet, verdict.Since(run.Started))
					if err != nil {
						orph.fault.While = fmt.Sprintf("made with the kubelet stopped for the switch to %s; still there %s later: %v", kr.Kubelet, took.Round(time.Second), err)
					}
				} else {
					orph.fault.While = fmt.Sprintf("made with the kubelet stopped for the switch to %s, which exited on it", kr.Kubelet)
				}
				orph.fault.Predicted, orph.fault.PredictionHeld = orphanPrediction(pred.Orphans, orph.fault.ContainerID, o.Variant, exit, removed)
				rep.Faults = append(rep.Faults, orph.fault)
				log("fault %s on node %s: %s", FaultOrphan, n.Name, orph.fault.While)
				if exit != nil || !removed {
					if err := orph.remove(ctx); err != nil {
						log("fault %s: removing container %.12s: %v", FaultOrphan, orph.fault.ContainerID, err)
					}
				}
				if exit != nil { // leave the node on FROM, as found
					if err := c.StartKubelet(ctx, n, o.From, matrix.Vanilla, fromKubelet); err != nil {
						log("node %s: back to FROM %s: %v", n.Name, o.From.Release, err)
					}
				}
			}
			if exited {
				break walk
			}
			v, err := c.kubeletVersion(ctx, n.Name)
			if err != nil {
				switchErr = err
				break walk
			}
			nr.Kubelets = append(nr.Kubelets, v)
		}
		rep.Nodes = append(rep.Nodes, nr)
		nr = verdict.NodeReport{}
	}
	if nr.Name != "" { // the walk stopped on this node
		rep.Nodes = append(rep.Nodes, nr)
	}
	if hung != nil && len(rep.Faults) == 0 {
		f := hung.free()
		f.While = "from before the first switch to TO until the walk stopped"
		rep.Faults = append(rep.Faults, f)
	}
	stopWatch()
	<-done
	<-done
	if switchErr != nil {
		return nil, switchErr
	}

	final, _, err := c.Kubectl.Pods(ctx)
	if err != nil {
		return nil, err
	}
	churn := map[string]*verdict.PodChurn{}
	for _, r := range recorders {
		evs, err := r.Stop()
		if err != nil {
			return nil, err
		}
		for uid, ch := range verdict.ChurnByPod(evs) {
			churn[uid] = ch
		}
	}
	recorders = nil
	// A container the kubelet killed for its failed liveness probe is the
	// workload's restart, not the switch's doing.
	apiEvents, err := c.Kubectl.Events(ctx)
	if err != nil {
		return nil, err
	}
	verdict.NoteLivenessKills(churn, apiEvents)
	notReady, notReadySum := ready.Seconds()
	untestedOn := untested(rep, o.To.Release+"/"+string(o.Variant))
	for _, key := range verdict.SortedKeys(baseline) {
		b := baseline[key]
		var now *verdict.PodState
		if f, ok := final[key]; ok {
			now = &f
		}
		j := verdict.Judge(b, now, churn[b.UID])
		pr := verdict.PodReport{Namespace: b.Namespace, Name: b.Name, Node: b.Node, UID: b.UID, Outcome: j.Outcome, Restarts: j.Restarts, Detail: j.Why}
		switch pr.Predicted = predicted[key]; {
		case pr.Predicted != "":
		case b.Completed():
			// Nothing of it runs: a switch has nothing to recreate.
			pr.Predicted = verdict.Kept
		default:
			pr.Predicted = "unknown"
		}
		pr.NotReadySeconds = notReady[key]
		pr.Untested = untestedOn(b.Node)
		rep.Pods = append(rep.Pods, pr)
	}
	rep.Summary.NotReadySeconds = notReadySum
	if rep.Summary.APIErrors = ready.Errors(); rep.Summary.APIErrors > 0 {
		log("readiness: %d API reads failed during the switches", rep.Summary.APIErrors)
	}
	var failures []string
	rep.Summary.Requests, rep.Summary.FailedRequests, failures = prober.Counts()
	for _, f := range failures {
		log("prober: %s", f)
	}
	rep.Seconds = verdict.Since(started)
	rep.Finish()
	return rep, nil
}

// applyWorkloads applies the operator's manifests, or the defaults and a
// static pod on the first node.
func (c *Cluster) applyWorkloads(ctx context.Context, dir string) error {
	if dir == "" {
		dir = filepath.Join(c.Layout.Dir, "workloads")
		if err := writeEmbedded(defaultWorkloads, "workloads", dir); err != nil {
			return err
		}
		if err := writeEmbedded(defaultStatic, "static", c.Nodes[0].ManifestDir()); err != nil {
			return err
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("MANIFESTS=%s: not a directory", dir)
	}
	// kubectl applies the files in name order; an operator's directory
	// need not put its namespaces first, so a failed pass gets a second.
	if out, err := c.Kubectl.Run(ctx, "apply", "--recursive", "-f", dir); err != nil {
		if out2, err2 := c.Kubectl.Run(ctx, "apply", "--recursive", "-f", dir); err2 != nil {
			return fmt.Errorf("applying %s: %w\n%s%s", dir, err2, out, out2)
		}
	}
	c.log("applied the workloads in %s", dir)
	return nil
}

func writeEmbedded(fsys embed.FS, sub, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return fs.WalkDir(fsys, sub, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fsys.ReadFile(path)
		if err != nil {
			return err
		}
		return fsutil.WriteFileAtomic(filepath.Join(dir, filepath.Base(path)), b, 0o644)
	})
}

// probeTargets: every Service port (NodePort ones on every node, the
// others by cluster IP from inside the first node, where kube-proxy's
// rules are) and the host ports of the pods, on their nodes.
func (c *Cluster) probeTargets() []verdict.Target {
	out, err := c.Kubectl.Run(context.Background(), "get", "services,pods", "--all-namespaces", "-o", "json")
	if err != nil {
		return nil
	}
	var list struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace, Name string
			} `json:"metadata"`
			Spec struct {
				Type      string `json:"type"`
				ClusterIP string `json:"clusterIP"`
				Ports     []struct {
					Port     int    `json:"port"`
					NodePort int    `json:"nodePort"`
					Protocol string `json:"protocol"`
				} `json:"ports"`
				NodeName   string `json:"nodeName"`
				Containers []struct {
					Ports []struct {
						HostPort int    `json:"hostPort"`
						Protocol string `json:"protocol"`
					} `json:"ports"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"items"`
	}
	if json.Unmarshal(out, &list) != nil {
		return nil
	}
	ips := map[string]string{}
	for _, n := range c.Nodes {
		ips[n.Name] = n.IP()
	}
	tcp := func(p string) bool { return p == "" || p == "TCP" }
	var targets []verdict.Target
	for _, it := range list.Items {
		switch it.Kind {
		case "Service":
			if it.Metadata.Namespace == "default" && it.Metadata.Name == "kubernetes" {
				continue // the API server itself, on the machine
			}
			for _, p := range it.Spec.Ports {
				if !tcp(p.Protocol) {
					continue
				}
				if p.NodePort > 0 {
					for _, n := range c.Nodes {
						targets = append(targets, verdict.Target{Addr: net.JoinHostPort(n.IP(), strconv.Itoa(p.NodePort))})
					}
				}
				if ip := net.ParseIP(it.Spec.ClusterIP); ip != nil {
					targets = append(targets, verdict.Target{Addr: net.JoinHostPort(it.Spec.ClusterIP, strconv.Itoa(p.Port)), Via: c.Nodes[0]})
				}
			}
		case "Pod":
			for _, ct := range it.Spec.Containers {
				for _, p := range ct.Ports {
					if p.HostPort > 0 && tcp(p.Protocol) && ips[it.Spec.NodeName] != "" {
						targets = append(targets, verdict.Target{Addr: net.JoinHostPort(ips[it.Spec.NodeName], strconv.Itoa(p.HostPort))})
					}
				}
			}
		}
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].String() < targets[j].String() })
	return targets
}

// apiNode is the part of a v1.Node the rehearsal reads.
type apiNode struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
			// LastHeartbeatTime is when a kubelet last posted it.
			LastHeartbeatTime time.Time `json:"lastHeartbeatTime"`
		} `json:"conditions"`
		NodeInfo struct {
			KubeletVersion string `json:"kubeletVersion"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

func (n apiNode) ready() bool {
	c, _ := n.readyCondition()
	return c.Status == "True"
}

// readyCondition is the node's Ready condition (Status "" if it has
// none) and when a kubelet last posted it.
func (n apiNode) readyCondition() (verdict.ReadyCondition, time.Time) {
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			return verdict.ReadyCondition{Status: c.Status, Reason: c.Reason, Message: c.Message}, c.LastHeartbeatTime
		}
	}
	return verdict.ReadyCondition{}, time.Time{}
}

// watchKubeletRun follows the node from run's start until it reports Ready
// under kubelet version want, the kubelet exits, or limit has passed
// (then the error says so). Every second it reads the node's Ready
// condition and whether the kubelet still runs. The condition counts once
// this kubelet posted it: the node reports want, with a heartbeat from
// after the kubelet's start (a switch to the same version shows the old
// kubelet's status until then).
func (c *Cluster) watchKubeletRun(ctx context.Context, n *nodes.Node, run nodes.Run, want string, limit time.Duration) (verdict.KubeletRun, *verdict.KubeletExit, error) {
	var kr verdict.KubeletRun
	last := time.Now()
	var exit *verdict.KubeletExit
	err := poll.Until(ctx, limit, time.Second, func(ctx context.Context) (bool, error) {
		now := time.Now()
		kr.NotReadySeconds = now.Sub(run.Started).Seconds()
		if pid, _, err := n.Status(ctx); err == nil && pid != run.PID {
			exit = &verdict.KubeletExit{AfterSeconds: kr.NotReadySeconds, LastLines: lastLines(run.Log, 3)}
			return true, nil
		}
		ns, err := c.apiNodes(ctx)
		if err != nil {
			return false, err
		}
		node, ok := ns[n.Name]
		if !ok || node.Status.NodeInfo.KubeletVersion != want {
			last = now
			return false, fmt.Errorf("the node still reports kubelet %q (want %s)", node.Status.NodeInfo.KubeletVersion, want)
		}
		cond, heartbeat := node.readyCondition()
		// The API's times have whole seconds.
		if heartbeat.Before(run.Started.Truncate(time.Second)) {
			last = now
			return false, fmt.Errorf("the node's status is from before the kubelet started (heartbeat %s)", heartbeat.Format(time.RFC3339))
		}
		if k := len(kr.Conditions); k > 0 && kr.Conditions[k-1].Status == cond.Status && kr.Conditions[k-1].Reason == cond.Reason && kr.Conditions[k-1].Message == cond.Message {
			kr.Conditions[k-1].Seconds += now.Sub(last).Seconds()
		} else {
			cond.Seconds = now.Sub(last).Seconds()
			kr.Conditions = append(kr.Conditions, cond)
		}
		last = now
		kr.Ready = cond.Status == "True"
		return kr.Ready, fmt.Errorf("Ready=%s %s: %s", cond.Status, cond.Reason, cond.Message)
	})
	if exit != nil {
		return kr, exit, nil
	}
	return kr, nil, err
}

// untested says, for a node on which TO's kubelet (label to, as in the
// readiness runs) never became Ready, why: the walk stopped before its
// switch, or TO exited there; "" for a node that ran TO. What TO would do
// to such a node's pods never happened, so their predictions are not
// judged.
func untested(rep *verdict.Report, to string) func(node string) string {
	walked, ran := map[string]bool{}, map[string]bool{}
	for _, n := range rep.Nodes {
		walked[n.Name] = true
		for _, k := range n.Readiness {
			ran[n.Name] = ran[n.Name] || k.Kubelet == to && k.Ready
		}
	}
	return func(node string) string {
		switch {
		case ran[node]:
			return ""
		case walked[node]:
			return fmt.Sprintf("prediction untested: node %s never ran kubelet %s to Ready", node, to)
		default:
			return fmt.Sprintf("prediction untested: the walk stopped before node %s's switch", node)
		}
	}
}

// lastLines returns the last n fatal lines of a kubelet log (klog's
// "F<mmdd> ..."; a fatal exit dumps every goroutine's stack after it), or
// its last n lines if it has none.
func lastLines(path string, n int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	var all, fatal []string
	for l := range strings.Lines(string(b)) {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		all = append(all, l)
		if klogFatal.MatchString(l) {
			fatal = append(fatal, l)
		}
	}
	if len(fatal) > 0 {
		all = fatal
	}
	return all[max(0, len(all)-n):]
}

var klogFatal = regexp.MustCompile(`^F\d{4} `)

func (c *Cluster) apiNodes(ctx context.Context) (map[string]apiNode, error) {
	out, err := c.Kubectl.Run(ctx, "get", "nodes", "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []apiNode `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, err
	}
	m := map[string]apiNode{}
	for _, n := range list.Items {
		m[n.Metadata.Name] = n
	}
	return m, nil
}

func (c *Cluster) kubeletVersion(ctx context.Context, node string) (string, error) {
	ns, err := c.apiNodes(ctx)
	if err != nil {
		return "", err
	}
	return ns[node].Status.NodeInfo.KubeletVersion, nil
}

// waitNodeReady waits until node is Ready and reports kubelet version want.
func (c *Cluster) waitNodeReady(ctx context.Context, node, want string, timeout time.Duration) error {
	err := poll.Until(ctx, timeout, 2*time.Second, func(ctx context.Context) (bool, error) {
		ns, err := c.apiNodes(ctx)
		if err != nil {
			return false, err
		}
		n, ok := ns[node]
		if !ok {
			return false, errors.New("node not registered")
		}
		got := n.Status.NodeInfo.KubeletVersion
		return n.ready() && got == want, fmt.Errorf("Ready=%v kubelet %s (want %s)", n.ready(), got, want)
	})
	if err != nil {
		return fmt.Errorf("node %s: %w", node, err)
	}
	return nil
}

// WaitNodesReady waits for every node Ready under release r.
func (c *Cluster) WaitNodesReady(ctx context.Context, r *matrix.Release, v matrix.Variant, timeout time.Duration) error {
	for _, n := range c.Nodes {
		if err := c.waitNodeReady(ctx, n.Name, r.GitVersion(v), timeout); err != nil {
			return err
		}
	}
	return nil
}

// waitPodsReady waits until every pod (on node, or anywhere for "") is
// Ready, or has run to completion. On timeout the error says, for each pod
// still not Ready, what the API and its node's kubelet log say of it.
func (c *Cluster) waitPodsReady(ctx context.Context, node string, timeout time.Duration) error {
	var stuck []verdict.PodState // as of the last check that listed pods
	err := poll.Until(ctx, timeout, 2*time.Second, func(ctx context.Context) (bool, error) {
		pods, _, err := c.Kubectl.Pods(ctx)
		if err != nil {
			return false, err
		}
		if len(pods) == 0 {
			return false, errors.New("no pods yet")
		}
		stuck = nil
		var keys []string
		for _, k := range verdict.SortedKeys(pods) {
			p := pods[k]
			if (node == "" || p.Node == node) && !p.Ready && !p.Completed() {
				stuck = append(stuck, p)
				keys = append(keys, k)
			}
		}
		return len(stuck) == 0, fmt.Errorf("not Ready: %s", strings.Join(keys, ", "))
	})
	if err != nil {
		if ctx.Err() != nil { // interrupted: no time for the logs
			return fmt.Errorf("pods: %w", err)
		}
		return fmt.Errorf("pods: %w%s", err, c.notReadyReport(stuck))
	}
	return nil
}

// notReadyReport is a line per pod, then indented why the API has it not
// Ready and the last lines its node's kubelets logged of it.
func (c *Cluster) notReadyReport(pods []verdict.PodState) string {
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "\n  %s (%s on %q)", p.Key(), p.Phase, p.Node)
		for _, why := range p.WhyNotReady() {
			fmt.Fprintf(&b, "\n    %s", why)
		}
		for _, l := range c.kubeletLinesOf(p) {
			fmt.Fprintf(&b, "\n    %s", l)
		}
	}
	return b.String()
}

// kubeletLinesPerPod bounds the kubelet log lines a not-Ready pod is
// reported with.
const kubeletLinesPerPod = 5

// kubeletLinesOf returns the last lines the pod's node's kubelets logged
// of it, each after its file's name: every kubelet run's log is read,
// first run first, so the current kubelet's lines come last.
func (c *Cluster) kubeletLinesOf(p verdict.PodState) []string {
	var dir string
	for _, n := range c.Nodes {
		if n.Name == p.Node {
			dir = n.LogDir()
		}
	}
	if dir == "" { // unscheduled, or not on a rehearsal node
		return nil
	}
	// supervise.sh writes kubelet-<nn>-<release>-<variant>.log per run,
	// nn zero-padded: Glob's sorted names are the runs in order.
	files, err := filepath.Glob(filepath.Join(dir, "kubelet-*.log"))
	if err != nil {
		return []string{"kubelet logs: " + err.Error()}
	}
	if len(files) == 0 {
		return []string{"no kubelet log in " + dir}
	}
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			lines = append(lines, "kubelet log: "+err.Error())
			continue
		}
		for _, l := range podLogLines(string(b), p.Name, p.UID) {
			lines = append(lines, filepath.Base(f)+": "+l)
		}
	}
	return lines[max(0, len(lines)-kubeletLinesPerPod):]
}

// podLogLines returns the last kubeletLinesPerPod lines of a log that
// mention the pod: by name (whole: web-1 is not in web-12's lines) or UID
// (a mirror pod's is its static pod's, the one the kubelet logs). Long
// lines (a kubelet may print a whole pod spec) are cut.
func podLogLines(log, name, uid string) []string {
	const maxLen = 400
	var out []string
	for line := range strings.Lines(log) {
		line = strings.TrimRight(line, "\r\n")
		if !mentionsName(line, name) && (uid == "" || !strings.Contains(line, uid)) {
			continue
		}
		if len(line) > maxLen {
			line = line[:maxLen] + " [...]"
		}
		out = append(out, line)
	}
	return out[max(0, len(out)-kubeletLinesPerPod):]
}

// mentionsName says whether name is in line with no other name character
// (a DNS subdomain's: a-z, 0-9, '-', '.') either side.
func mentionsName(line, name string) bool {
	isNameChar := func(b byte) bool {
		return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '.'
	}
	for from := 0; name != ""; {
		i := strings.Index(line[from:], name)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(name)
		if (start == 0 || !isNameChar(line[start-1])) && (end == len(line) || !isNameChar(line[end])) {
			return true
		}
		from = start + 1
	}
	return false
}
