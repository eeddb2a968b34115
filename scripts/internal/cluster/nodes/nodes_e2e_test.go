//go:build nodes_e2e

package nodes

// The node end to end: real node containers on an engine of the tests'
// own (tools/engine-up.sh with ENGINE_DIR=_output/nodes-e2e/engine, bridge
// kubelet-nt0, 198.18.203.1/24, brought up by the first test that needs it
// and purged by TestMain; never the e2e's or the rehearsal's engine),
// real kubelets (every release of versions.yaml, patched and vanilla: make
// e2e builds them) and each control plane's daemons and kube-proxy (make
// e2e builds every control plane versions.yaml names).
// Built only with the nodes_e2e tag, so a plain `go test ./...` neither runs
// nor skips them; `e2e/run.sh nodes` (in `make e2e`) runs them. Nothing
// missing is ever a pass: each test fails saying what to build.
//
// Each test removes only what it made: its own cluster (a name unique to
// the run, RemoveCluster), or containers and volumes under a fake root.
// KEEP=1 leaves a failed test's cluster, and the engine, up.

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/cluster/controlplane"
	"kubelet-toolchain/scripts/internal/migrate"
	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/execx"
	"kubelet-toolchain/tools/poll"
)

// The tests' own engine: a bridge and a network of its own, apart from the
// e2e's (kubelet-e2e0, 198.18.201.0/24) and the rehearsal's (kubelet-rh0,
// 198.18.202.0/24), which may be in use while these run.
const (
	e2eBridge     = "kubelet-nt0"
	e2eBridgeCIDR = "198.18.203.1/24"
)

var (
	// runID makes this run's cluster and container names unique.
	runID = func() string {
		b := make([]byte, 3)
		rand.Read(b)
		return hex.EncodeToString(b)
	}()
	engineOnce sync.Once
	engineErr  error
	engineUp   bool
)

func repoRoot() string {
	root, err := filepath.Abs("../../../..")
	if err != nil {
		panic(err)
	}
	return root
}

// e2eWorkDir holds the tests' engine, node logs and node directories.
func e2eWorkDir(root string) string { return filepath.Join(root, "_output", "nodes-e2e") }

func e2eEngine(root string) Engine {
	return Engine{Socket: filepath.Join(e2eWorkDir(root), "engine", "docker.sock")}
}

func keep() bool { return os.Getenv("KEEP") == "1" }

// engineScript runs tools/<script> for the tests' engine; the caller's
// ENGINE_* and E2E_BRIDGE* settings are dropped (they may name another engine).
func engineScript(root, script string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "tools", script), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ENGINE_") && !strings.HasPrefix(kv, "E2E_BRIDGE") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ENGINE_DIR="+filepath.Join(e2eWorkDir(root), "engine"),
		"ENGINE_BRIDGE="+e2eBridge, "ENGINE_BRIDGE_CIDR="+e2eBridgeCIDR)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("tools/%s (ENGINE_DIR=_output/nodes-e2e/engine ENGINE_BRIDGE=%s ENGINE_BRIDGE_CIDR=%s): %w",
			script, e2eBridge, e2eBridgeCIDR, err)
	}
	return nil
}

// TestMain takes the tests' engine down after them (a test brings it up on
// first use), after checking that every test removed what it made.
func TestMain(m *testing.M) {
	code := m.Run()
	if !engineUp {
		os.Exit(code)
	}
	root := repoRoot()
	if engineErr == nil && !(code != 0 && keep()) {
		e := e2eEngine(root)
		ctx := context.Background()
		cs, err1 := e.Run(ctx, "ps", "-aq")
		vs, err2 := e.Run(ctx, "volume", "ls", "-q")
		if err := errors.Join(err1, err2); err != nil {
			fmt.Fprintf(os.Stderr, "nodes e2e: listing what is left on the engine: %v\n", err)
			code = 1
		} else if cs != "" || vs != "" {
			fmt.Fprintf(os.Stderr, "nodes e2e: the tests left containers %q and volumes %q on their engine\n", docker.Lines(cs), docker.Lines(vs))
			code = 1
		}
	}
	if code != 0 && keep() {
		fmt.Fprintf(os.Stderr, "nodes e2e: KEEP=1: the engine stays up; ENGINE_DIR=%s ENGINE_BRIDGE=%s tools/engine-down.sh --purge takes it down\n",
			filepath.Join(e2eWorkDir(root), "engine"), e2eBridge)
	} else if err := engineScript(root, "engine-down.sh", "--purge"); err != nil {
		fmt.Fprintf(os.Stderr, "nodes e2e: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

// e2eEnv brings the tests' engine up (once) and returns the repository
// root and the engine.
func e2eEnv(t *testing.T) (root string, e Engine) {
	t.Helper()
	root = repoRoot()
	e = e2eEngine(root)
	engineOnce.Do(func() {
		engineUp = true // whatever happened half-way, TestMain takes it down
		if engineErr = engineScript(root, "engine-up.sh"); engineErr != nil {
			return
		}
		if _, err := e.Run(context.Background(), "version"); err != nil {
			engineErr = fmt.Errorf("engine-up.sh succeeded but the engine does not answer: %w", err)
		}
	})
	if engineErr != nil {
		t.Fatalf("no engine for the node tests: %v (scripts/prereqs.sh installs docker.io; the script's output is above)", engineErr)
	}
	return root, e
}

// kubeletBinary is a built kubelet, or the test fails saying what builds it.
func kubeletBinary(t *testing.T, root, release, variant string) string {
	t.Helper()
	bin := filepath.Join(root, "_output", release, variant, "bin", "linux", "amd64", "kubelet")
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("no kubelet %s/%s at %s (%v): make kubelet VERSION=%s VARIANT=%s builds it (make e2e builds every one)",
			release, variant, bin, err, release, variant)
	}
	return bin
}

// newCluster is a cluster of the test's own: a name unique to this run,
// its work directory under _output/nodes-e2e/<short>; removed (only it)
// when the test ends.
func newCluster(t *testing.T, short string, clamp bool) *Cluster {
	t.Helper()
	root, e := e2eEnv(t)
	ctx := context.Background()
	image, err := EnsureImage(ctx, ImageOptions{Engine: e, Dir: ImageCacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	cni, err := BuildCNIPlugins(ctx, filepath.Join(root, "_output", "cni"))
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Engine: e, Name: "nt-" + short + "-" + runID, Root: root, Image: image,
		WorkDir: filepath.Join(e2eWorkDir(root), short), CNIBinDir: cni}
	if clamp {
		c.RuncClamp = filepath.Join(e2eWorkDir(root), "bin", "runc-clamp")
		if err := BuildRuncClamp(ctx, root, c.RuncClamp); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() && keep() {
			t.Logf("KEEP=1: cluster %s left on the engine", c.Name)
			return
		}
		if err := RemoveCluster(context.Background(), e, root, c.Name); err != nil {
			t.Errorf("remove cluster %s: %v", c.Name, err)
		}
	})
	return c
}

// clientCAFile is the name of the kubelets' client CA in a node's config dir.
const clientCAFile = "client-ca.crt"

// writeClientCA writes a CA certificate into dir whose key is never
// written anywhere: a kubelet refusing anonymous requests needs an
// authenticator to start, and with this one nobody can authenticate.
func writeClientCA(t *testing.T, dir string) {
	t.Helper()
	ca, err := controlplane.NewCA("nodes e2e kubelet client CA (no key kept)")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
	if err := os.WriteFile(filepath.Join(dir, clientCAFile), crt, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNodeImage(t *testing.T) {
	_, e := e2eEnv(t)
	ctx := context.Background()
	for i := range 2 {
		start := time.Now()
		tag, err := EnsureImage(ctx, ImageOptions{Engine: e, Dir: ImageCacheDir()})
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
		bins[r] = kubeletBinary(t, root, r, "patched")
	}
	c := newCluster(t, "switch", true)

	var nodes []*Node
	for i, name := range []string{"node-a", "node-b"} {
		// The kubelets' client CA, in the node's config dir (NodeConfigDir).
		config := filepath.Join(c.WorkDir, "config", name)
		writeClientCA(t, config)
		start := time.Now()
		n, err := c.Create(ctx, Spec{Name: name, Index: i + 1, ConfigDir: config})
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
		args, err := KubeletArgs(release, KubeletOptions{NodeName: n.Name, NodeIP: n.IP(),
			ClientCAFile: NodeConfigDir + "/" + clientCAFile, AllowSwap: HostHasSwap()})
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
	for _, n := range nodes {
		assertLockedDown(t, n, "1.7.5")
	}

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
			assertLockedDown(t, n, release)
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

// assertLockedDown: the node's kubelet answers an anonymous request on
// its TLS port (10250, from the host, to the node's IP) with 401, and its
// read-only port (10255) and cAdvisor's (4194) refuse connections. Called
// once the kubelet has synced, so every server it would open is open.
func assertLockedDown(t *testing.T, n *Node, release string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the kubelet's self-signed serving certificate
	}}
	defer c.CloseIdleConnections()
	url := "https://" + net.JoinHostPort(n.IP(), "10250") + "/pods"
	var status int
	waitFor(t, fmt.Sprintf("%s: kubelet %s answers on 10250", n.Name, release), 60*time.Second, func() error {
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
		return nil
	})
	if status != http.StatusUnauthorized {
		t.Errorf("%s: kubelet %s: anonymous GET %s: %d, want 401", n.Name, release, url, status)
	}
	for _, port := range []string{"10255", "4194"} {
		addr := net.JoinHostPort(n.IP(), port)
		conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err == nil {
			conn.Close()
			t.Errorf("%s: kubelet %s: %s accepts connections, want them refused", n.Name, release, addr)
		} else if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s: kubelet %s: %s: %v, want connection refused", n.Name, release, addr, err)
		}
	}
	if !t.Failed() {
		t.Logf("%s: kubelet %s: anonymous GET /pods 401, 10255 and 4194 refused", n.Name, release)
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
// RemoveCluster removes one cluster of that root, not another cluster of
// it, nor a cluster of that name of another root. The roots are fake (the
// checkout's own is never passed).
func TestRemoveAllOnlyOurs(t *testing.T) {
	_, e := e2eEnv(t)
	ctx := context.Background()
	ours, other := "/nodes-e2e/removeall-"+runID, "/nodes-e2e/other-"+runID
	cluster := "nt-removeall-" + runID
	name := func(s string) string { return "nt-ra-" + runID + "-" + s }
	mk := func(n string, labels ...string) {
		t.Helper()
		var l []string
		for _, x := range labels {
			l = append(l, "--label", x)
		}
		t.Cleanup(func() {
			e.Run(context.Background(), "rm", "-f", name(n))
			e.Run(context.Background(), "volume", "rm", "-f", name(n))
		})
		if _, err := e.Run(ctx, append(append([]string{"volume", "create"}, l...), name(n))...); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(ctx, append(append([]string{"create", "--name", name(n)}, l...), "e2e.local/workload:1")...); err != nil {
			t.Fatal(err)
		}
	}
	mk("ours", LabelRehearsal+"="+ours)
	mk("ours-cluster", LabelRehearsal+"="+ours, LabelCluster+"="+cluster)
	mk("ours-other-cluster", LabelRehearsal+"="+ours, LabelCluster+"="+cluster+"-x")
	mk("other-root-cluster", LabelRehearsal+"="+other, LabelCluster+"="+cluster)
	mk("unlabelled")
	check := func(step string, want map[string]bool) {
		t.Helper()
		for n, present := range want {
			_, errC := e.Run(ctx, "inspect", "--type", "container", name(n))
			_, errV := e.Run(ctx, "volume", "inspect", name(n))
			if (errC == nil) != present || (errV == nil) != present {
				t.Errorf("after %s: %s: container present %v, volume present %v; want %v", step, n, errC == nil, errV == nil, present)
			}
		}
	}
	if err := RemoveCluster(ctx, e, ours, cluster); err != nil {
		t.Fatal(err)
	}
	check("RemoveCluster", map[string]bool{"ours": true, "ours-cluster": false, "ours-other-cluster": true,
		"other-root-cluster": true, "unlabelled": true})
	if err := RemoveAll(ctx, e, ours); err != nil {
		t.Fatal(err)
	}
	check("RemoveAll", map[string]bool{"ours": false, "ours-other-cluster": false, "other-root-cluster": true, "unlabelled": true})
	for _, bad := range [][2]string{{ours, ""}, {"", cluster}} {
		if err := RemoveCluster(ctx, e, bad[0], bad[1]); err == nil {
			t.Errorf("RemoveCluster(%q, %q): want an error", bad[0], bad[1])
		}
	}
}

// Every flag KubeletArgs emits is one the release's kubelet knows, for
// every release a rehearsal runs, both variants, with and without an API
// server; the same for KubeProxyArgs and each control plane's kube-proxy
// (each versions.yaml names), and for the flags the control plane's own
// daemons are started with. The flags are
// parsed in order and --help, last, stops before anything runs; an unknown
// flag or a bad value is reported first ("unknown flag", "invalid
// argument"). The exit status says nothing: old pflag exits 2 on --help too.
// A binary that is not there fails the test. What a binary checks only
// after parsing (kube-proxy 1.9's --metrics-bind-address wants IP:port) is
// not reached here: the rehearsal's bring-up fails on a kube-proxy that exits.
func TestKubeletFlagsAccepted(t *testing.T) {
	root := repoRoot()
	withAPIServer := KubeletOptions{NodeName: "n1", NodeIP: "198.18.203.2", Kubeconfig: "/k", ClientCAFile: "/ca",
		TLSCertFile: "/c", TLSKeyFile: "/key", AllowSwap: true}
	standalone := KubeletOptions{NodeName: "n1", ClientCAFile: "/ca"}
	// Every release (not one with a standIn) and every control plane
	// versions.yaml names, each of which must be built; with
	// NODES_E2E_TARGETS=built (CI's e2e and a release's shard: e2e/run.sh)
	// those built under _output/, at least one.
	m, err := matrix.Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	onlyBuilt := os.Getenv("NODES_E2E_TARGETS") == "built"
	built := func(path string) bool {
		_, err := os.Stat(path)
		return !onlyBuilt || err == nil
	}
	type kubelet struct{ release, variant string }
	var kubelets []kubelet
	var cps []string
	for _, r := range m.Releases {
		if r.StandIn != "" {
			continue
		}
		for _, variant := range []string{"patched", "vanilla"} {
			if built(filepath.Join(root, "_output", r.Release, variant, "bin", "linux", "amd64", "kubelet")) {
				kubelets = append(kubelets, kubelet{r.Release, variant})
			}
		}
		if r.Series.ControlPlane != "" && built(filepath.Join(root, "_output", r.Release, "control-plane", "bin", "kube-proxy")) {
			cps = append(cps, r.Release)
		}
	}
	if len(kubelets) == 0 || len(cps) == 0 {
		t.Fatalf("no kubelet (%d) or control plane (%d) built under _output/ to check", len(kubelets), len(cps))
	}
	t.Logf("checking the kubelets %v and the control planes %v", kubelets, cps)
	for _, k := range kubelets {
		release, variant := k.release, k.variant
		bin := kubeletBinary(t, root, release, variant)
		for _, o := range []KubeletOptions{withAPIServer, standalone} {
			args, err := KubeletArgs(release, o)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := execxRun(bin, append(args, "--help")...)
			if bad := flagError(out); bad != "" {
				t.Errorf("kubelet %s/%s rejects %v: %s", release, variant, args, bad)
			}
		}
		// The check sees a flag the kubelet does not know.
		if out, _ := execxRun(bin, "--no-such-flag", "--help"); flagError(out) == "" {
			t.Errorf("kubelet %s/%s: an unknown flag went unnoticed: %.200q", release, variant, out)
		}
		// The dockershim the release builds, with the flags a rehearsal
		// node's shim gets (a hung node's too).
		shim := filepath.Join(filepath.Dir(bin), "dockershim")
		if r, _ := m.Lookup(release); r == nil || r.Series.Shim == "" {
			continue
		}
		for _, args := range [][]string{ShimArgs("pause:3.6", ""), ShimArgs("pause:3.6", "unix:///host-run/fault.sock")} {
			out, _ := execxRun(shim, append(args, "--help")...)
			if bad := flagError(out); bad != "" {
				t.Errorf("dockershim %s/%s rejects %v: %s", release, variant, args, bad)
			}
		}
		if out, _ := execxRun(shim, "--no-such-flag", "--help"); flagError(out) == "" {
			t.Errorf("dockershim %s/%s: an unknown flag went unnoticed: %.200q", release, variant, out)
		}
	}
	for _, cp := range cps {
		// The control plane's own daemons, with the flags the rehearsal
		// starts them with (lockdown included).
		c := &controlplane.ControlPlane{Release: cp, BinDir: filepath.Join(root, "_output", cp, "control-plane", "bin"),
			Layout: controlplane.Layout{Dir: "/cp"}, Address: "198.18.203.1", Ports: controlplane.PortsFor(1)}
		for name, cmd := range c.Commands() {
			out, _ := execxRun(cmd[0], append(cmd[1:], "--help")...)
			if bad := flagError(out); bad != "" {
				t.Errorf("%s %s rejects %v: %s", name, cp, cmd[1:], bad)
			}
			if out, _ := execxRun(cmd[0], "--no-such-flag", "--help"); flagError(out) == "" {
				t.Errorf("%s %s: an unknown flag went unnoticed: %.200q", name, cp, out)
			}
		}
		proxy := filepath.Join(root, "_output", cp, "control-plane", "bin", "kube-proxy")
		if _, err := os.Stat(proxy); err != nil {
			t.Fatalf("no kube-proxy at %s (%v): make control-plane VERSION=%s builds it", proxy, err, cp)
		}
		out, _ := execxRun(proxy, append(KubeProxyArgs("n1", "/k"), "--help")...)
		if bad := flagError(out); bad != "" {
			t.Errorf("kube-proxy %s rejects %v: %s", cp, KubeProxyArgs("n1", "/k"), bad)
		}
		if out, _ := execxRun(proxy, "--no-such-flag", "--help"); flagError(out) == "" {
			t.Errorf("kube-proxy %s: an unknown flag went unnoticed: %.200q", cp, out)
		}
	}
}

// TestSwitchNodeFlagsAccepted: the flags toolchain switch-node writes for
// a kubeadm 1.23 node (kubeadm's network plugin and pause image, an
// operator's node IP, CNI dir and hairpin mode, the cgroup driver in the
// config file) are accepted by every built kubelet of 1.24+ they are for,
// and the shim's by 1.23.17's dockershim of each variant, as the kubelets'
// flags are checked above.
func TestSwitchNodeFlagsAccepted(t *testing.T) {
	root := repoRoot()
	m, err := matrix.Load(filepath.Join(root, "versions.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	node := migrate.Node{Root: t.TempDir()}
	for p, data := range map[string]string{
		migrate.KubeadmFlagsFile:  `KUBELET_KUBEADM_ARGS="--network-plugin=cni --pod-infra-container-image=k8s.gcr.io/pause:3.6"` + "\n",
		"/etc/default/kubelet":    "KUBELET_EXTRA_ARGS=--node-ip=10.0.0.5 --cni-bin-dir=/opt/cni/bin --hairpin-mode=hairpin-veth\n",
		migrate.KubeletConfigFile: "cgroupDriver: systemd\n",
	} {
		if err := os.MkdirAll(filepath.Join(node.Root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(node.Root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	onlyBuilt := os.Getenv("NODES_E2E_TARGETS") == "built"
	checked := 0
	for _, r := range m.Releases {
		if !r.RunsOnShim() {
			continue
		}
		p, err := node.PlanSwitch(r.Release, r.Version().Minor)
		if err != nil {
			t.Fatal(err)
		}
		var args []string
		for _, f := range p.Files {
			for _, name := range []string{"KUBELET_KUBEADM_ARGS", "KUBELET_EXTRA_ARGS"} {
				if v, ok := migrate.ReadVar(f.Data, name); ok {
					args = append(args, strings.Fields(v)...)
				}
			}
		}
		for _, variant := range []string{"patched", "vanilla"} {
			bin := filepath.Join(root, "_output", r.Release, variant, "bin", "linux", "amd64", "kubelet")
			if _, err := os.Stat(bin); err != nil && onlyBuilt {
				continue
			}
			bin = kubeletBinary(t, root, r.Release, variant)
			out, _ := execxRun(bin, append(args, "--help")...)
			if bad := flagError(out); bad != "" {
				t.Errorf("kubelet %s/%s rejects what switch-node writes %v: %s", r.Release, variant, args, bad)
			}
			checked++
		}
		for _, f := range p.Files {
			shimArgs, ok := migrate.ReadVar(f.Data, "DOCKERSHIM_ARGS")
			if !ok {
				continue
			}
			for _, variant := range []string{"patched", "vanilla"} {
				shim := filepath.Join(root, "_output", "1.23.17", variant, "bin", "linux", "amd64", "dockershim")
				if _, err := os.Stat(shim); err != nil {
					if !onlyBuilt {
						t.Errorf("no dockershim at %s (%v): make dockershim VERSION=1.23.17 VARIANT=%s builds it", shim, err, variant)
					}
					continue
				}
				out, _ := execxRun(shim, append(strings.Fields(shimArgs), "--help")...)
				if bad := flagError(out); bad != "" {
					t.Errorf("dockershim 1.23.17/%s rejects what switch-node writes for %s (%s): %s", variant, r.Release, shimArgs, bad)
				}
				if out, _ := execxRun(shim, "--no-such-flag", "--help"); flagError(out) == "" {
					t.Errorf("dockershim 1.23.17/%s: an unknown flag went unnoticed: %.200q", variant, out)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		if !onlyBuilt {
			t.Fatal("no kubelet of 1.24+ or shim checked")
		}
		// CI's run builds only what its specs name: the shards of 1.24.17
		// and 1.25.16 build these.
		t.Log("no kubelet of 1.24+ built here (NODES_E2E_TARGETS=built): nothing to check")
		return
	}
	t.Logf("%d kubelets and shims accept what switch-node writes", checked)
}

func execxRun(name string, args ...string) (string, error) {
	out, err := execx.Run(context.Background(), execx.Cmd{Name: name, Args: args, Timeout: time.Minute})
	return string(out), err
}

// flagError is the flag parser's complaint, or "" when the usage text
// comes with none. The 1.7-1.9 kubelets (pflag) print "Usage of ..." and
// stop at the first complaint, before it; from 1.10 the kubelet parses its
// flags itself and, on a bad one, prints the usage and then the complaint
// (klog.Fatal; from 1.21 a structured error line first, `E... "Failed to
// parse kubelet flag" err="unknown flag: ..."`; 1.25 only `E... "command
// failed" err="failed to parse kubelet flag: ..."`); kube-proxy (cobra) its
// description, then "Usage:", or "Error: ..." first. No usage text at all
// is a complaint too (a binary that did not run, or printed something else).
func flagError(out string) string {
	usage := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Usage") {
			usage = true
			continue
		}
		// Complaints start their line (pflag, cobra) or follow klog's
		// header ("F1128 09:15:34.440891 123 server.go:..] unknown flag").
		if i := strings.Index(l, "] "); i > 0 && (l[0] == 'F' || l[0] == 'E') {
			l = l[i+2:]
		}
		for _, bad := range []string{"Error:", "unknown flag", "unknown shorthand flag", "invalid argument",
			"flag needs an argument", "bad flag syntax", "flag provided but not defined", `"Failed to parse kubelet flag"`,
			`"command failed" err="failed to parse kubelet flag`} {
			if strings.HasPrefix(l, bad) {
				return l
			}
		}
	}
	if usage {
		return ""
	}
	first, _, _ := strings.Cut(out, "\n")
	return fmt.Sprintf("no usage text (output starts %q)", first)
}

// One node: a `docker save` tarball loads, no kubelet runs before one is
// started, and Remove leaves nothing.
func TestNodeTarballAndRemove(t *testing.T) {
	_, e := e2eEnv(t)
	ctx := context.Background()
	c := newCluster(t, "tarball", false)
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
