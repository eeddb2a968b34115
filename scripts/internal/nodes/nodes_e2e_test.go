package nodes

// The node end to end: real node containers on the rehearsal's engine
// (tools/engine-up.sh with ENGINE_DIR=_output/rehearsal/engine), real
// kubelets (make kubelet VERSION=1.7.5 and VERSION=1.9.11). Skipped unless
// REHEARSAL_NODES=1; see docs/rehearsal.md ("The rehearsal's nodes") for the command.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/execx"
	"kubelet-toolchain/tools/poll"
)

func e2eEnv(t *testing.T) (root string, e Engine) {
	t.Helper()
	if os.Getenv("REHEARSAL_NODES") != "1" {
		t.Skip("REHEARSAL_NODES=1 runs the node end to end on the rehearsal's engine")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("ENGINE_DIR")
	if dir == "" {
		dir = filepath.Join(root, "_output", "rehearsal", "engine")
	}
	e = Engine{Socket: filepath.Join(dir, "docker.sock")}
	if _, err := e.Run(context.Background(), "version"); err != nil {
		t.Fatalf("no rehearsal engine (tools/engine-up.sh with ENGINE_DIR=%s): %v", dir, err)
	}
	return root, e
}

func TestNodeImage(t *testing.T) {
	root, e := e2eEnv(t)
	ctx := context.Background()
	for i := range 2 {
		start := time.Now()
		tag, err := EnsureImage(ctx, ImageOptions{Engine: e, Dir: ImageCacheDir(root)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("EnsureImage #%d: %s in %s", i+1, tag, time.Since(start).Round(100*time.Millisecond))
	}
}

const staticPod = `apiVersion: v1
kind: Pod
metadata:
  name: %[1]s
  namespace: default
  uid: %[2]s
spec:
  containers:
  - name: app
    image: e2e.local/workload:1
    imagePullPolicy: Never
    ports:%[3]s
    securityContext:
      privileged: %[4]v
`

func writePod(t *testing.T, n *Node, name, uid string, hostPort int, privileged bool) {
	t.Helper()
	ports := " []"
	if hostPort != 0 {
		ports = fmt.Sprintf("\n    - containerPort: 8080\n      hostPort: %d", hostPort)
	}
	y := fmt.Sprintf(staticPod, name, uid, ports, privileged)
	if err := os.WriteFile(filepath.Join(n.ManifestDir(), name+".yaml"), []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
}

// podContainers maps "<pod>/<container>" to the running container id for
// every kubelet-made container of the node's inner engine.
func podContainers(ctx context.Context, n *Node) (map[string]string, error) {
	out, err := n.Docker(ctx, "ps", "--no-trunc", "--filter", "label=io.kubernetes.pod.name",
		"--format", `{{.ID}} {{.Label "io.kubernetes.pod.name"}}/{{.Label "io.kubernetes.container.name"}}`)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range docker.Lines(out) {
		id, key, _ := strings.Cut(l, " ")
		pod, ctr, _ := strings.Cut(key, "/")
		m[strings.TrimSuffix(pod, "-"+n.Name)+"/"+ctr] = id
	}
	return m, nil
}

func waitFor(t *testing.T, what string, timeout time.Duration, f func() error) {
	t.Helper()
	if err := poll.Until(context.Background(), timeout, 500*time.Millisecond, func(context.Context) (bool, error) {
		err := f()
		return err == nil, err
	}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// podIP is the pod's eth0 address, read in its sandbox's network namespace.
func podIP(ctx context.Context, n *Node, pod string) (string, error) {
	pid, err := n.Docker(ctx, "inspect", "-f", "{{.State.Pid}}", podContainer(ctx, n, pod, "POD"))
	if err != nil {
		return "", err
	}
	out, err := n.Exec(ctx, "nsenter", "-t", pid, "-n", "ip", "-4", "-o", "addr", "show", "eth0")
	if err != nil {
		return "", err
	}
	for _, f := range strings.Fields(out) {
		if strings.Contains(f, "/") && strings.HasPrefix(f, "10.244.") {
			return strings.Split(f, "/")[0], nil
		}
	}
	return "", fmt.Errorf("no pod address in %q", out)
}

func podContainer(ctx context.Context, n *Node, pod, container string) string {
	m, _ := podContainers(ctx, n)
	return m[pod+"/"+container]
}

// httpFromPod sends GET path to addr from inside a pod's network
// namespace on n (socat in the node, entered into the pod's netns).
func httpFromPod(ctx context.Context, n *Node, pod, addr, path string) (string, error) {
	pid, err := n.Docker(ctx, "inspect", "-f", "{{.State.Pid}}", podContainer(ctx, n, pod, "POD"))
	if err != nil {
		return "", err
	}
	return n.Exec(ctx, "sh", "-c", fmt.Sprintf(`printf 'GET %s HTTP/1.0\r\n\r\n' | timeout 5 nsenter -t %s -n socat -t 5 - TCP:%s`, path, pid, addr))
}

func TestTwoNodesSwitch(t *testing.T) {
	root, e := e2eEnv(t)
	ctx := context.Background()
	bins := map[string]string{}
	for _, r := range []string{"1.7.5", "1.9.11"} {
		bins[r] = filepath.Join(root, "_output", r, "patched", "bin", "linux", "amd64", "kubelet")
		if _, err := os.Stat(bins[r]); err != nil {
			t.Fatalf("make kubelet VERSION=%s first: %v", r, err)
		}
	}
	work := filepath.Join(root, "_output", "rehearsal")
	image, err := EnsureImage(ctx, ImageOptions{Engine: e, Dir: ImageCacheDir(root)})
	if err != nil {
		t.Fatal(err)
	}
	cni, err := BuildCNIPlugins(ctx, filepath.Join(root, "_output", "cni"))
	if err != nil {
		t.Fatal(err)
	}
	clamp := filepath.Join(work, "bin", "runc-clamp")
	if err := BuildRuncClamp(ctx, root, clamp); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Engine: e, Name: "rh-nodetest", Root: root, Image: image, WorkDir: work, CNIBinDir: cni, RuncClamp: clamp}
	t.Cleanup(func() {
		if t.Failed() && os.Getenv("KEEP") == "1" {
			return
		}
		RemoveAll(context.Background(), e, root)
	})

	var nodes []*Node
	for i, name := range []string{"node-a", "node-b"} {
		start := time.Now()
		n, err := c.Create(ctx, Spec{Name: name, Index: i + 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("create %s (%s): dockerd ready in %s", name, n.IP(), time.Since(start).Round(100*time.Millisecond))
		nodes = append(nodes, n)
	}
	a, b := nodes[0], nodes[1]
	if g, err := c.Get(ctx, Spec{Name: "node-a", Index: 1}); err != nil || g.IP() != a.IP() {
		t.Fatalf("Get node-a: %v, %v", g, err)
	}
	if err := a.AddRoute(ctx, b.PodCIDR(), b.IP()); err != nil {
		t.Fatal(err)
	}
	if err := b.AddRoute(ctx, a.PodCIDR(), a.IP()); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		start := time.Now()
		if err := n.LoadImages(ctx, DefaultPauseImage, "e2e.local/workload:1"); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: images loaded in %s", n.Name, time.Since(start).Round(100*time.Millisecond))
	}
	writePod(t, a, "web", "11111111-0000-0000-0000-00000000000a", 18080, false)
	writePod(t, a, "priv", "22222222-0000-0000-0000-00000000000a", 0, true)
	writePod(t, b, "web", "11111111-0000-0000-0000-00000000000b", 18080, false)

	kubelet := func(n *Node, release string) Kubelet {
		args, err := KubeletArgs(release, KubeletOptions{NodeName: n.Name, NodeIP: n.IP(), AllowSwap: HostHasSwap()})
		if err != nil {
			t.Fatal(err)
		}
		return Kubelet{Release: release, Variant: "patched", Binary: bins[release], Args: args}
	}
	want := []string{"priv/POD", "priv/app", "web/POD", "web/app"}
	recs := map[*Node]*EventRecorder{}
	for _, n := range nodes {
		r, err := n.RecordEvents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		recs[n] = r
	}
	for _, n := range nodes {
		if _, err := n.StartKubelet(ctx, kubelet(n, "1.7.5")); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for _, n := range nodes {
		n := n
		w := want
		if n == b {
			w = want[2:]
		}
		waitFor(t, n.Name+": static pods running", 90*time.Second, func() error {
			m, err := podContainers(ctx, n)
			if err != nil {
				return err
			}
			got := slices.Sorted(func(yield func(string) bool) {
				for k := range m {
					if !yield(k) {
						return
					}
				}
			})
			if !slices.Equal(got, w) {
				return fmt.Errorf("running %v, want %v", got, w)
			}
			return nil
		})
	}
	t.Logf("kubelet 1.7.5 to static pods running on both nodes: %s", time.Since(start).Round(100*time.Millisecond))

	// The privileged container really is privileged.
	priv := podContainer(ctx, a, "priv", "app")
	if out, err := a.Docker(ctx, "inspect", "-f", "{{.HostConfig.Privileged}}", priv); err != nil || out != "true" {
		t.Fatalf("priv/app privileged=%q err=%v", out, err)
	}
	// A pod on A reaches a pod IP on B (routed between the nodes).
	ipB, err := podIP(ctx, b, "web")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pod on A -> pod IP on B", 30*time.Second, func() error {
		out, err := httpFromPod(ctx, a, "web", ipB+":8080", "/healthz")
		if err != nil || !strings.Contains(out, "200 OK") {
			return fmt.Errorf("%q %v", out, err)
		}
		return nil
	})
	// The hostPort answers on each node's IP, from the host.
	for _, n := range nodes {
		waitFor(t, n.Name+" hostPort", 30*time.Second, func() error { return httpGet("http://" + n.IP() + ":18080/healthz") })
	}

	switches := time.Now()
	before := map[*Node]map[string]string{}
	for _, n := range nodes {
		before[n], _ = podContainers(ctx, n)
	}
	for _, release := range []string{"1.9.11", "1.7.5"} {
		for _, n := range nodes {
			since := time.Now()
			r, err := n.StartKubelet(ctx, kubelet(n, release))
			if err != nil {
				t.Fatal(err)
			}
			if r.OldPID == 0 || r.PID == r.OldPID {
				t.Fatalf("%s: switch to %s: old pid %d, new pid %d", n.Name, release, r.OldPID, r.PID)
			}
			if _, err := n.Exec(ctx, "test", "-d", fmt.Sprintf("/proc/%d", r.OldPID)); err == nil {
				t.Fatalf("%s: old kubelet (pid %d) still running after the switch", n.Name, r.OldPID)
			}
			exe, err := n.Exec(ctx, "readlink", fmt.Sprintf("/proc/%d/exe", r.PID))
			if err != nil || !strings.HasSuffix(exe, "/"+release+"/patched/kubelet") {
				t.Fatalf("%s: new kubelet runs %q (%v)", n.Name, exe, err)
			}
			t.Logf("%s: switch to %s in %s (pid %d -> %d, log %s)", n.Name, release, r.Took.Round(10*time.Millisecond), r.OldPID, r.PID, filepath.Base(r.Log))
			// Let the new kubelet sync every pod (1.9.11 recreates within
			// a second or two of starting when hashes differ).
			waitFor(t, n.Name+" kubelet synced", 60*time.Second, func() error { return synced(r.Log) })
			time.Sleep(10 * time.Second)
			after, err := podContainers(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if !maps(before[n], after) {
				t.Fatalf("%s: after switching to %s containers changed:\nbefore %v\nafter  %v", n.Name, release, before[n], after)
			}
			evs, err := n.Events(ctx, since)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Attributes["io.kubernetes.pod.name"] != "" && (ev.Action == "die" || ev.Action == "destroy" || ev.Action == "create") {
					t.Fatalf("%s: after switching to %s: %s %s (%s)", n.Name, release, ev.Action, ev.Attributes["io.kubernetes.pod.name"], ev.ID)
				}
			}
			t.Logf("%s: %d containers kept, %d inner events since the switch", n.Name, len(after), len(evs))
		}
	}

	// The streamed events saw every container start before the switches
	// and no container created, dead or destroyed after them.
	for _, n := range nodes {
		evs, err := recs[n].Stop()
		if err != nil {
			t.Fatal(err)
		}
		starts := 0
		for _, ev := range evs {
			pod := ev.Attributes["io.kubernetes.pod.name"]
			if pod == "" {
				continue
			}
			if ev.Time.Before(switches) && ev.Action == "start" {
				starts++
			}
			if !ev.Time.Before(switches) && (ev.Action == "create" || ev.Action == "die" || ev.Action == "destroy") {
				t.Errorf("%s: %s %s/%s at %s, after the switches began", n.Name, ev.Action, pod, ev.Attributes["io.kubernetes.container.name"], ev.Time.Format(time.StampMilli))
			}
		}
		if starts != len(before[n]) {
			t.Errorf("%s: recorded %d container starts before the switches, want %d (%d events)", n.Name, starts, len(before[n]), len(evs))
		}
		if out, _ := n.Exec(ctx, "sh", "-c", "ps -eo args | grep -c '^docker events' || true"); out != "0" {
			t.Errorf("%s: docker events still running after Stop: %s", n.Name, out)
		}
		t.Logf("%s: %d inner container events recorded, %d starts before the switches", n.Name, len(evs), starts)
	}

	// Remove leaves nothing on the host.
	for _, n := range nodes {
		id := traces(t, e, n)
		start := time.Now()
		if err := n.Remove(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s removed in %s", n.Name, time.Since(start).Round(100*time.Millisecond))
		assertGone(t, e, n, id)
	}
}

// synced: the kubelet's log shows it has run its first pod sync loop.
func synced(log string) error {
	f, err := os.Open(log)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "SyncLoop (ADD, \"file\")") {
			return nil
		}
	}
	return fmt.Errorf("no SyncLoop ADD in %s yet", log)
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func httpGet(url string) error {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// traces are what identifies a node on the host: its container id and its
// root filesystem's overlay directory (a mount point named by neither
// the container nor the volume).
func traces(t *testing.T, e Engine, n *Node) []string {
	t.Helper()
	out, err := e.Run(context.Background(), "inspect", "-f", "{{.Id}} {{.GraphDriver.Data.MergedDir}}", n.Container)
	f := strings.Fields(out)
	if err != nil || len(f) != 2 {
		t.Fatalf("%s: inspect: %q %v", n.Name, out, err)
	}
	return []string{f[0], filepath.Dir(f[1])}
}

// assertGone: no container, volume, mount or process of the node remains.
func assertGone(t *testing.T, e Engine, n *Node, ids []string) {
	t.Helper()
	ctx := context.Background()
	if out, _ := e.Run(ctx, "ps", "-aq", "--filter", "name=^"+n.Container+"$"); out != "" {
		t.Errorf("%s: container left: %s", n.Name, out)
	}
	if out, _ := e.Run(ctx, "volume", "ls", "-q", "--filter", "name="+n.Volume); out != "" {
		t.Errorf("%s: volume left: %s", n.Name, out)
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(mi), "\n") {
		if l != "" && (slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(l, id) }) || strings.Contains(l, n.Volume)) {
			t.Errorf("%s: mount left: %s", n.Name, l)
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), ids[0]) {
			cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
			t.Errorf("%s: process left: %s %q", n.Name, p, strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
}

// RemoveAll removes what carries our label with this root, and nothing
// else: not an unlabelled container or volume, not another checkout's.
func TestRemoveAllOnlyOurs(t *testing.T) {
	root, e := e2eEnv(t)
	ctx := context.Background()
	mk := func(name string, labels ...string) {
		t.Helper()
		var l []string
		for _, x := range labels {
			l = append(l, "--label", x)
		}
		if _, err := e.Run(ctx, append(append([]string{"volume", "create"}, l...), name)...); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(ctx, append(append([]string{"create", "--name", name}, l...), "e2e.local/workload:1")...); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			e.Run(context.Background(), "rm", "-f", name)
			e.Run(context.Background(), "volume", "rm", "-f", name)
		})
	}
	mk("rh-removeall-ours", LabelRehearsal+"="+root)
	mk("rh-removeall-unlabelled")
	mk("rh-removeall-other-root", LabelRehearsal+"=/somewhere/else")
	if err := RemoveAll(ctx, e, root); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"rh-removeall-ours": false, "rh-removeall-unlabelled": true, "rh-removeall-other-root": true} {
		_, errC := e.Run(ctx, "inspect", "--type", "container", name)
		_, errV := e.Run(ctx, "volume", "inspect", name)
		if (errC == nil) != want || (errV == nil) != want {
			t.Errorf("%s: container present %v, volume present %v; want %v", name, errC == nil, errV == nil, want)
		}
	}
}

// Every flag KubeletArgs emits is one the release's kubelet knows: the
// flags are parsed in order and --help, last, stops before anything runs;
// an unknown flag or a bad value is reported first ("unknown flag",
// "invalid argument"). The exit status says nothing: old pflag exits 2 on
// --help too.
func TestKubeletFlagsAccepted(t *testing.T) {
	root, _ := e2eEnv(t)
	full := KubeletOptions{NodeName: "n1", NodeIP: "198.18.202.2", Kubeconfig: "/k", ClientCAFile: "/ca",
		TLSCertFile: "/c", TLSKeyFile: "/key", AllowSwap: true}
	for _, release := range []string{"1.7.5", "1.9.11"} {
		bin := filepath.Join(root, "_output", release, "patched", "bin", "linux", "amd64", "kubelet")
		args, err := KubeletArgs(release, full)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := execxRun(bin, append(args, "--help")...)
		if bad := flagError(out); bad != "" {
			t.Errorf("kubelet %s rejects %v: %s", release, args, bad)
		}
	}
	proxy := filepath.Join(root, "_output", "1.9.11", "control-plane", "bin", "kube-proxy")
	if _, err := os.Stat(proxy); err != nil {
		t.Logf("no %s (make control-plane VERSION=1.9.11): kube-proxy flags not checked", proxy)
		return
	}
	out, _ := execxRun(proxy, append(KubeProxyArgs("n1", "/k"), "--help")...)
	if bad := flagError(out); bad != "" {
		t.Errorf("kube-proxy rejects %v: %s", KubeProxyArgs("n1", "/k"), bad)
	}
}

func execxRun(name string, args ...string) (string, error) {
	out, err := execx.Run(context.Background(), execx.Cmd{Name: name, Args: args, Timeout: time.Minute})
	return string(out), err
}

// flagError is the flag parser's complaint before the usage text, or ""
// when the usage text comes first.
func flagError(out string) string {
	first, _, _ := strings.Cut(out, "\n")
	if strings.HasPrefix(first, "Usage") {
		return ""
	}
	return first
}

// One node: a `docker save` tarball loads, no kubelet runs before one is
// started, and Remove leaves nothing.
func TestNodeTarballAndRemove(t *testing.T) {
	root, e := e2eEnv(t)
	ctx := context.Background()
	work := filepath.Join(root, "_output", "rehearsal")
	image, err := EnsureImage(ctx, ImageOptions{Engine: e, Dir: ImageCacheDir(root)})
	if err != nil {
		t.Fatal(err)
	}
	cni, err := BuildCNIPlugins(ctx, filepath.Join(root, "_output", "cni"))
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Engine: e, Name: "rh-nodetest", Root: root, Image: image, WorkDir: work, CNIBinDir: cni}
	t.Cleanup(func() { RemoveAll(context.Background(), e, root) })
	n, err := c.Create(ctx, Spec{Name: "node-t", Index: 9})
	if err != nil {
		t.Fatal(err)
	}
	tar := filepath.Join(t.TempDir(), "workload.tar")
	if _, err := e.Run(ctx, "save", "-o", tar, "e2e.local/workload:1"); err != nil {
		t.Fatal(err)
	}
	if err := n.LoadImages(ctx, tar); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Docker(ctx, "image", "inspect", "e2e.local/workload:1"); err != nil {
		t.Fatalf("tarball not loaded: %v", err)
	}
	if err := n.LoadImages(ctx, "no-such-image:1"); err == nil || !strings.Contains(err.Error(), "no-such-image:1") {
		t.Fatalf("loading a missing image: %v", err)
	}
	if k, p, err := n.Status(ctx); err != nil || k != 0 || p != 0 {
		t.Fatalf("status before any start: kubelet %d kube-proxy %d, %v", k, p, err)
	}
	id := traces(t, e, n)
	if err := n.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	assertGone(t, e, n, id)
}
