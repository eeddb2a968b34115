package rehearsal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/cluster/nodes"
	"kubelet-toolchain/scripts/internal/cluster/verdict"
	"kubelet-toolchain/scripts/internal/identity/podhash"
	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/dockerproxy"
	"kubelet-toolchain/tools/poll"
)

// FaultHang is the docker-hang report's fault: one running container
// whose inspect never answers, through a fault proxy between one node's
// kubelet and its dockerd.
const FaultHang = "hang"

// FaultOrphan is the orphan report's fault: a running container whose
// pod, sandbox container and sandbox checkpoint are gone, made while the
// node's kubelet is stopped for its first switch to TO.
const FaultOrphan = "orphan"

// Faults lists what FAULTS accepts.
var Faults = []string{FaultHang, FaultOrphan}

// ParseFaults reads FAULTS: a comma-separated list of Faults, each once.
func ParseFaults(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			continue
		case !slices.Contains(Faults, f):
			return nil, fmt.Errorf("FAULTS=%s: unknown fault %q (known: %s)", s, f, strings.Join(Faults, ", "))
		case slices.Contains(out, f):
			return nil, fmt.Errorf("FAULTS=%s: %q twice", s, f)
		}
		out = append(out, f)
	}
	return out, nil
}

// A fault is one of the field reports' failures, put in place on the
// first node before the walk and active for that node's first switch to
// TO.
type fault interface {
	name() string
	on() *nodes.Node
	// arm runs just before the switch to k: it may stop the node's kubelet
	// and change the node; it returns what k starts with.
	arm(ctx context.Context, w *rehearsal, k kubelet) (armed, error)
	// judge runs once the switched kubelet was watched: it ends the fault
	// and returns it as the report gives it, its prediction checked.
	judge(ctx context.Context, w *rehearsal, s switched) verdict.Fault
	// unjudged returns the fault as the report gives it when the walk
	// stopped before judge ran, if it has anything to say then.
	unjudged() (verdict.Fault, bool)
	close()
}

// switched is the run of the kubelet a fault was armed for.
type switched struct {
	kr   verdict.KubeletRun
	exit *verdict.KubeletExit // nil: it did not exit
	run  nodes.Run
	at   time.Time // the switch began
}

// faultStarts puts each fault in place on node, before the preflight: the
// hang's proxy (the preflight reads that node through it, as its kubelet
// will), the orphan's pod (it becomes the orphan while the switch has the
// kubelet stopped).
var faultStarts = map[string]func(context.Context, *rehearsal, *nodes.Node) (fault, error){
	FaultHang: func(_ context.Context, w *rehearsal, n *nodes.Node) (fault, error) {
		h, err := w.c.startHang(n, w.baseline)
		if err != nil {
			return nil, err
		}
		return h, nil
	},
	FaultOrphan: func(ctx context.Context, w *rehearsal, n *nodes.Node) (fault, error) {
		o, err := w.c.startOrphanPod(ctx, n)
		if err != nil {
			return nil, err
		}
		return o, nil
	},
}

// startFaults puts FAULTS in place on the first node, in Faults' order.
func (w *rehearsal) startFaults(ctx context.Context) error {
	for _, name := range Faults {
		if !slices.Contains(w.o.Faults, name) {
			continue
		}
		f, err := faultStarts[name](ctx, w, w.c.Nodes[0])
		if err != nil {
			return err
		}
		w.faults = append(w.faults, f)
	}
	return nil
}

// faultsUnjudged reports the faults the walk stopped before judging.
func (w *rehearsal) faultsUnjudged() {
	for _, f := range w.faults {
		if rf, ok := f.unjudged(); ok {
			w.rep.Faults = append(w.rep.Faults, rf)
		}
	}
}

// hang is a FaultHang in place: the proxy runs in this process, its
// socket in the node's run directory, which the node sees too; only the
// kubelet started with kubeletFlags dials it.
type hang struct {
	node   *nodes.Node
	proxy  *dockerproxy.Proxy
	log    *os.File
	fault  verdict.Fault
	judged bool
}

func (h *hang) name() string    { return FaultHang }
func (h *hang) on() *nodes.Node { return h.node }

// arm points the node's dockershim, and the kubelet's cadvisor where it
// has a Docker factory (before 1.24), at the proxy, as the e2e's hung
// nodes do; the hang holds through the phase.
func (h *hang) arm(_ context.Context, _ *rehearsal, k kubelet) (armed, error) {
	_, inNode := h.node.FaultSocket()
	a := armed{dockerEndpoint: "unix://" + inNode}
	if !k.r.RunsOnShim() {
		a.flags = []string{"--docker=unix://" + inNode}
	}
	return a, nil
}

func (h *hang) judge(_ context.Context, w *rehearsal, s switched) verdict.Fault {
	f := h.free()
	f.While = fmt.Sprintf("from before the switch to %s until its phase was watched (%.0fs)", s.kr.Kubelet, verdict.Since(s.at))
	f.Predicted, f.PredictionHeld = hangPrediction(w.pred.Hung, f.ContainerID, w.o.Variant, s.kr)
	h.judged = true
	w.log("fault %s freed on node %s: %d inspect requests were held", FaultHang, h.node.Name, f.Held)
	return f
}

// unjudged frees the container the walk stopped holding before its phase
// was judged.
func (h *hang) unjudged() (verdict.Fault, bool) {
	if h.judged {
		return verdict.Fault{}, false
	}
	f := h.free()
	f.While = "from before the first switch to TO until the walk stopped"
	return f, true
}

// startHang picks the first running app container (by pod key) of a
// controller's pod on node, starts the proxy and hangs it. Nothing is
// held until a kubelet dials the proxy.
func (c *Cluster) startHang(node *nodes.Node, pods map[string]verdict.PodState) (*hang, error) {
	var pick *verdict.Fault
	for _, key := range verdict.SortedKeys(pods) {
		p := pods[key]
		if p.Node != node.Name || p.Owner == "" || p.Completed() {
			continue
		}
		names := make([]string, 0, len(p.Containers))
		for name := range p.Containers {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if id, ok := strings.CutPrefix(p.Containers[name].ID, "docker://"); ok && id != "" {
				pick = &verdict.Fault{Kind: FaultHang, Node: node.Name, Pod: key, Container: name, ContainerID: id}
				break
			}
		}
		if pick != nil {
			break
		}
	}
	if pick == nil {
		return nil, fmt.Errorf("FAULTS=%s: node %s runs no container of a controller's pod to hang", FaultHang, node.Name)
	}
	logf, err := os.OpenFile(filepath.Join(node.LogDir(), "fault-proxy.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	sock, _ := node.FaultSocket()
	p, err := dockerproxy.Start(sock, node.DockerSocket(), dockerproxy.WithLogWriter(logf))
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("FAULTS=%s on node %s: %w", FaultHang, node.Name, err)
	}
	if err := p.Hang(pick.ContainerID); err != nil {
		p.Close()
		logf.Close()
		return nil, fmt.Errorf("FAULTS=%s on node %s: %w", FaultHang, node.Name, err)
	}
	c.log("fault %s: node %s, %s container %s (%.12s): its inspect never answers through the proxy", FaultHang, node.Name, pick.Pod, pick.Container, pick.ContainerID)
	return &hang{node: node, proxy: p, log: logf, fault: *pick}, nil
}

// free stops holding the container's inspects (the held ones are then
// answered) and returns the fault as the report gives it.
func (h *hang) free() verdict.Fault {
	h.proxy.Release(h.fault.ContainerID)
	h.fault.Held = len(h.proxy.HeldRequests())
	return h.fault
}

// close stops the proxy, once no kubelet dials it.
func (h *hang) close() {
	h.proxy.Close()
	h.log.Close()
}

// hangPrediction is what the preflight said TO's variant would do on the
// hung container, and whether the run under TO bore it out: a node Ready
// within the bound, or one that stays NotReady (vanilla before 1.24).
func hangPrediction(found []podhash.HungContainer, id string, v matrix.Variant, run verdict.KubeletRun) (string, bool) {
	for _, h := range found {
		if h.ID != id {
			continue
		}
		p := h.Patched
		if v == matrix.Vanilla {
			p = h.Vanilla
		}
		return p, strings.HasPrefix(p, podhash.HungReady) == !run.Slow()
	}
	return "", false
}

// orphanNamespace holds the pod the rehearsal owns to make the orphan
// from: none of the workloads', so the verdict's pods never include it.
const orphanNamespace = "rehearsal-faults"

// OrphanGoneBound is how long a kubelet that tolerates the orphan may take
// to remove it before the switch back to FROM goes ahead anyway: its pod
// cleanup (every 2 s in HandlePodCleanups) kills a container whose pod is
// gone, its container GC (every minute) removes it.
const OrphanGoneBound = 2 * time.Minute

// orphan is a FaultOrphan: its pod while it runs, then the container left.
type orphan struct {
	node  *nodes.Node
	fault verdict.Fault
}

func (o *orphan) name() string                    { return FaultOrphan }
func (o *orphan) on() *nodes.Node                 { return o.node }
func (o *orphan) unjudged() (verdict.Fault, bool) { return verdict.Fault{}, false }
func (o *orphan) close()                          {}

// arm makes the orphan with the node's kubelet stopped, and runs the
// preflight again there, as an operator would.
func (o *orphan) arm(ctx context.Context, w *rehearsal, _ kubelet) (armed, error) {
	if _, err := o.node.StopKubelet(ctx); err != nil {
		return armed{}, err
	}
	if err := o.make(ctx, w.c); err != nil {
		return armed{}, err
	}
	_, err := w.predictNode(ctx, o.node)
	return armed{}, err
}

// judge checks the switched kubelet removed the orphan, or exited on it
// as predicted. A kubelet that tolerates the orphan removes it; one that
// exited on it leaves it to the rehearsal, which made it, and the node
// goes back to FROM, as found.
func (o *orphan) judge(ctx context.Context, w *rehearsal, s switched) verdict.Fault {
	removed := false
	if s.exit == nil {
		took, err := o.gone(ctx, OrphanGoneBound)
		removed = err == nil
		o.fault.While = fmt.Sprintf("made with the kubelet stopped for the switch to %s; removed by it %.0fs after its start", s.kr.Kubelet, verdict.Since(s.run.Started))
		if err != nil {
			o.fault.While = fmt.Sprintf("made with the kubelet stopped for the switch to %s; still there %s later: %v", s.kr.Kubelet, took.Round(time.Second), err)
		}
	} else {
		o.fault.While = fmt.Sprintf("made with the kubelet stopped for the switch to %s, which exited on it", s.kr.Kubelet)
	}
	o.fault.Predicted, o.fault.PredictionHeld = orphanPrediction(w.pred.Orphans, o.fault.ContainerID, w.o.Variant, s.exit, removed)
	w.log("fault %s on node %s: %s", FaultOrphan, o.node.Name, o.fault.While)
	if s.exit != nil || !removed {
		if err := o.remove(ctx); err != nil {
			w.log("fault %s: removing container %.12s: %v", FaultOrphan, o.fault.ContainerID, err)
		}
	}
	if s.exit != nil {
		if err := w.c.StartKubelet(ctx, o.node, w.from); err != nil {
			w.log("node %s: back to FROM %s: %v", o.node.Name, w.from.r.Release, err)
		}
	}
	return o.fault
}

// startOrphanPod runs the pod the orphan is made from on node, and
// returns once its container runs.
func (c *Cluster) startOrphanPod(ctx context.Context, node *nodes.Node) (*orphan, error) {
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: Pod
metadata: {name: orphan, namespace: %[1]s}
spec:
  nodeName: %[2]s
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: %[3]s, env: [{name: PORT, value: "18181"}]}
`, orphanNamespace, node.Name, workloadImage)
	dir := filepath.Join(c.Layout.Dir, "faults")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "orphan.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		return nil, err
	}
	if out, err := c.Kubectl.Run(ctx, "apply", "-f", file); err != nil {
		return nil, fmt.Errorf("FAULTS=%s: %w\n%s", FaultOrphan, err, out)
	}
	key := orphanNamespace + "/orphan"
	o := &orphan{node: node, fault: verdict.Fault{Kind: FaultOrphan, Node: node.Name, Pod: key, Container: "app"}}
	err := poll.Until(ctx, 2*time.Minute, time.Second, func(ctx context.Context) (bool, error) {
		pods, _, err := c.Kubectl.Pods(ctx)
		if err != nil {
			return false, err
		}
		id, ok := strings.CutPrefix(pods[key].Containers["app"].ID, "docker://")
		o.fault.ContainerID = id
		return ok && id != "" && pods[key].Ready, fmt.Errorf("pod %s not running yet", key)
	})
	if err != nil {
		return nil, fmt.Errorf("FAULTS=%s: %w", FaultOrphan, err)
	}
	c.log("fault %s: pod %s runs container %.12s on node %s", FaultOrphan, key, o.fault.ContainerID, node.Name)
	return o, nil
}

// make turns the pod into the orphan report's container, with the node's
// kubelet stopped: the pod force-deleted from the API, its sandbox
// container and dockershim checkpoint removed, its app container left
// running.
func (o *orphan) make(ctx context.Context, c *Cluster) error {
	var info []struct {
		Config struct{ Labels map[string]string }
	}
	if err := o.node.Engine().Inspect(ctx, &info, o.fault.ContainerID); err != nil || len(info) != 1 {
		return fmt.Errorf("FAULTS=%s: inspecting %.12s on node %s: %v", FaultOrphan, o.fault.ContainerID, o.node.Name, err)
	}
	sandbox := info[0].Config.Labels["io.kubernetes.sandbox.id"]
	if sandbox == "" {
		return fmt.Errorf("FAULTS=%s: container %.12s has no sandbox label", FaultOrphan, o.fault.ContainerID)
	}
	if out, err := c.Kubectl.Run(ctx, "delete", "pod", "-n", orphanNamespace, "orphan", "--force", "--grace-period=0", "--wait=false"); err != nil {
		return fmt.Errorf("FAULTS=%s: deleting the pod: %w\n%s", FaultOrphan, err, out)
	}
	if _, err := o.node.Engine().Run(ctx, "rm", "-f", sandbox); err != nil {
		return fmt.Errorf("FAULTS=%s: removing sandbox %.12s: %w", FaultOrphan, sandbox, err)
	}
	if _, err := o.node.Exec(ctx, "rm", "-f", "/var/lib/dockershim/sandbox/"+sandbox); err != nil {
		return fmt.Errorf("FAULTS=%s: removing sandbox %.12s's checkpoint: %w", FaultOrphan, sandbox, err)
	}
	c.log("fault %s: node %s: pod %s deleted, sandbox %.12s and its checkpoint removed; container %.12s left running", FaultOrphan, o.node.Name, o.fault.Pod, sandbox, o.fault.ContainerID)
	return nil
}

// gone waits up to bound for the orphan to leave the node's engine and
// says how long it took.
func (o *orphan) gone(ctx context.Context, bound time.Duration) (time.Duration, error) {
	start := time.Now()
	err := poll.Until(ctx, bound, 2*time.Second, func(ctx context.Context) (bool, error) {
		ids, err := o.node.Engine().Lines(ctx, "ps", "-a", "-q", "--no-trunc", "--filter", "id="+o.fault.ContainerID)
		return err == nil && len(ids) == 0, fmt.Errorf("container %.12s still on node %s", o.fault.ContainerID, o.node.Name)
	})
	return time.Since(start), err
}

// remove takes the orphan away by hand (after a kubelet exited on it):
// the rehearsal made it, and FROM must start again.
func (o *orphan) remove(ctx context.Context) error {
	_, err := o.node.Engine().Run(ctx, "rm", "-f", o.fault.ContainerID)
	if errors.Is(err, docker.ErrNotFound) {
		return nil
	}
	return err
}

// orphanPrediction is what the preflight said TO's variant would do on
// the orphan, and whether the run bore it out: an exit with the field
// report's line, or the container removed within OrphanGoneBound.
func orphanPrediction(found []podhash.OrphanContainer, id string, v matrix.Variant, exit *verdict.KubeletExit, removed bool) (string, bool) {
	for _, o := range found {
		if o.ID != id {
			continue
		}
		said := o.Patched
		if v == matrix.Vanilla {
			said = o.Vanilla
		}
		exited := exit != nil && slices.ContainsFunc(exit.LastLines, func(l string) bool { return strings.Contains(l, podhash.OrphanExit) })
		if strings.Contains(said, "exits") {
			return said, exited
		}
		return said, exit == nil && removed
	}
	return "", false
}
