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
		// A static pod is in the API only once its kubelet made its
		// mirror (again, after a switch that changed its UID): until
		// then it is missing from the list, not unready.
		for _, n := range c.Nodes {
			if node != "" && n.Name != node {
				continue
			}
			if want, got := staticManifests(n.ManifestDir()), mirrors(pods, n.Name); got < want {
				keys = append(keys, fmt.Sprintf("%d of node %s's %d static pods (no mirror pod yet)", want-got, n.Name, want))
			}
		}
		return len(keys) == 0, fmt.Errorf("not Ready: %s", strings.Join(keys, ", "))
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

// staticManifests counts the static pod manifests in a node's manifest
// directory (the kubelet reads every file there but dotfiles).
func staticManifests(dir string) int {
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// mirrors counts the mirror pods on node.
func mirrors(pods map[string]verdict.PodState, node string) int {
	n := 0
	for _, p := range pods {
		if p.Mirror && p.Node == node {
			n++
		}
	}
	return n
}
