package nodes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"kubelet-toolchain/scripts/internal/base/dockershim"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/tools/docker"
)

// DefaultPauseImage is 1.7's and 1.9's default --pod-infra-container-image.
const DefaultPauseImage = "gcr.io/google_containers/pause-amd64:3.0"

// KubeletOptions are what KubeletArgs needs to know about the node.
type KubeletOptions struct {
	NodeName string
	NodeIP   string
	// Kubeconfig is a path in the node (under NodeConfigDir); empty runs
	// the kubelet standalone (static pods only).
	Kubeconfig string
	// ClientCAFile (in the node) authenticates clients of the kubelet's
	// TLS port (the API server's exec/logs). Required: anonymous requests
	// are refused, and a kubelet with no authenticator does not start.
	ClientCAFile string
	// TLSCertFile and TLSKeyFile (in the node) are its serving
	// certificate; empty = the kubelet's self-signed one.
	TLSCertFile, TLSKeyFile string
	PauseImage              string // DefaultPauseImage when empty
	Verbosity               int    // --v; 2 when zero
	// AllowSwap passes --fail-swap-on=false to kubelets that have the flag
	// (1.8+): they refuse to start on a machine with swap otherwise.
	AllowSwap bool
	// Extra flags, appended last (they win).
	Extra []string
}

// KubeletArgs builds the flags a release's kubelet takes for a node.
func KubeletArgs(release string, o KubeletOptions) ([]string, error) {
	minor, err := minorOf(release)
	if err != nil {
		return nil, err
	}
	pause := o.PauseImage
	if pause == "" {
		pause = DefaultPauseImage
	}
	v := o.Verbosity
	if v == 0 {
		v = 2
	}
	args := []string{
		"--hostname-override=" + o.NodeName,
		"--cgroup-driver=cgroupfs",
		"--pod-manifest-path=" + NodeManifestDir,
		"--pod-infra-container-image=" + pause,
		// No registry: an image garbage-collected away cannot be pulled
		// back, and the node sees the host's disk usage, not its own.
		"--image-gc-high-threshold=100",
		"--image-gc-low-threshold=99",
		// Only the memory signal: nodefs/imagefs are the host's disk.
		"--eviction-hard=memory.available<100Mi",
		"--v=" + strconv.Itoa(v),
	}
	if minor >= matrix.ShimFrom {
		// 1.24 removed dockershim and its flags (an unknown flag is
		// fatal): the network plugin is the shim's (ShimArgs), which the
		// kubelet reaches over CRI at the socket 1.23's kubelet served
		// (no default in 1.24).
		args = append(args, "--container-runtime=remote", "--container-runtime-endpoint="+dockershim.Endpoint)
	} else {
		args = append(args, networkPluginArgs...)
	}
	// 1.15 removed the flag: privileged pods are allowed unless a pod
	// security policy says otherwise (an unknown flag is fatal).
	if minor < 15 {
		args = append(args, "--allow-privileged=true")
	}
	if o.NodeIP != "" {
		args = append(args, "--node-ip="+o.NodeIP)
	}
	if o.Kubeconfig != "" {
		args = append(args, "--kubeconfig="+o.Kubeconfig)
		if minor <= 7 {
			// 1.7 ignores --kubeconfig without it (standalone mode).
			args = append(args, "--require-kubeconfig=true")
		}
	}
	// Locked down past 1.7-1.9's defaults (CIS node items): no anonymous
	// requests, no read-only port, no cAdvisor port (gone in 1.12); with an
	// API server, every request is authorized by it (Webhook).
	if o.ClientCAFile == "" {
		return nil, fmt.Errorf("kubelet %s on %s: a client CA is required (anonymous requests are refused)", release, o.NodeName)
	}
	args = append(args, "--client-ca-file="+o.ClientCAFile, "--anonymous-auth=false", "--read-only-port=0")
	if minor < 12 {
		args = append(args, "--cadvisor-port=0")
	}
	if o.Kubeconfig != "" {
		args = append(args, "--authorization-mode=Webhook")
	}
	if o.TLSCertFile != "" {
		args = append(args, "--tls-cert-file="+o.TLSCertFile, "--tls-private-key-file="+o.TLSKeyFile)
	}
	// 1.7 lacks --fail-swap-on (an unknown flag is fatal).
	if o.AllowSwap && minor >= 8 {
		args = append(args, "--fail-swap-on=false")
	}
	return append(args, o.Extra...), nil
}

// networkPluginArgs are dockershim's network settings on a node: in the
// kubelet through 1.23, in the shim from 1.24.
var networkPluginArgs = []string{"--network-plugin=cni", "--cni-bin-dir=" + NodeCNIBinDir, "--cni-conf-dir=" + NodeCNIConfDir}

// ShimArgs are the flags of the standalone dockershim a kubelet of 1.24+
// runs on: the network plugin, cgroup driver and sandbox image 1.23's
// kubelet had on the node (KubeletArgs), so the sandboxes it made keep
// their IPs. dockerEndpoint is the engine's socket in the node ("": the
// node's dockerd), pause the sandbox image (the shim's, not the kubelet's,
// decides it).
func ShimArgs(pause, dockerEndpoint string) []string {
	args := append([]string{
		"--container-runtime-endpoint=" + dockershim.Endpoint,
		"--cgroup-driver=cgroupfs",
		"--pod-infra-container-image=" + pause,
		"--v=2",
	}, networkPluginArgs...)
	if dockerEndpoint != "" {
		args = append(args, "--docker-endpoint="+dockerEndpoint)
	}
	return args
}

// HostHasSwap reports whether the machine has swap on (nodes share its kernel).
func HostHasSwap() bool {
	b, err := os.ReadFile("/proc/swaps")
	return err == nil && len(strings.Split(strings.TrimSpace(string(b)), "\n")) > 1
}

func minorOf(release string) (int, error) {
	v, err := matrix.ParseVersion(release)
	if err == nil && v.Major != 1 {
		err = fmt.Errorf("release %q: want 1.<minor>[.<patch>]", release)
	}
	return v.Minor, err
}

// Kubelet is a kubelet to run on a node.
type Kubelet struct {
	Release, Variant string
	// Binary is the kubelet on the host (_output/<release>/<variant>/bin/linux/amd64/kubelet).
	Binary string
	// Args are its flags (KubeletArgs).
	Args []string
	// Shim is the standalone dockershim it runs on: required from 1.24,
	// none before (a kubelet of 1.23 or older serves its own).
	Shim *Shim
}

// Shim is a standalone dockershim (make dockershim) on a node.
type Shim struct {
	Release, Variant string
	Binary           string   // on the host
	Args             []string // ShimArgs
}

// Run is one started kubelet or kube-proxy.
type Run struct {
	Release, Variant string // empty for kube-proxy
	// PID is its pid in the node's pid namespace; OldPID the one it
	// replaced (0 if none ran), which is gone when StartKubelet returns.
	PID, OldPID int
	// Log is its log file on the host.
	Log     string
	Started time.Time
	// Took is how long the switch took (stop the old, start the new).
	Took time.Duration
}

// StartKubelet starts k on the node, or switches to it: the running
// kubelet is stopped (SIGTERM, then SIGKILL after 30 s) and k started;
// dockerd and every container keep running. It returns once the old
// kubelet is gone and the new one runs k.Binary.
func (n *Node) StartKubelet(ctx context.Context, k Kubelet) (Run, error) {
	what := fmt.Sprintf("node %s: kubelet %s/%s", n.Name, k.Release, k.Variant)
	inNode, err := n.cluster.stage(k.Binary, filepath.Join(k.Release, k.Variant, "kubelet"))
	if err != nil {
		return Run{}, fmt.Errorf("%s: %w", what, err)
	}
	minor, err := minorOf(k.Release)
	if err != nil {
		return Run{}, fmt.Errorf("%s: %w", what, err)
	}
	if (k.Shim != nil) != (minor >= matrix.ShimFrom) {
		return Run{}, fmt.Errorf("%s: a kubelet runs on a standalone dockershim from 1.%d on, and only then", what, matrix.ShimFrom)
	}
	start := time.Now()
	old := -1
	if k.Shim != nil {
		// The old kubelet goes first: a kubelet of 1.23 serves its own
		// dockershim on the socket the shim takes.
		if old, err = n.StopKubelet(ctx); err != nil {
			return Run{}, fmt.Errorf("%s: %w", what, err)
		}
		if err := n.startShim(ctx, *k.Shim); err != nil {
			return Run{}, fmt.Errorf("%s: %w", what, err)
		}
	}
	// The supervisor stops a shim before a kubelet of 1.23 or older.
	out, err := n.Exec(ctx, append([]string{supervisor, "kubelet", k.Release, k.Variant, inNode}, k.Args...)...)
	if err != nil {
		return Run{}, fmt.Errorf("%s: %w", what, err)
	}
	r, err := n.parseRun(out)
	if err != nil {
		return Run{}, fmt.Errorf("%s: %w", what, err)
	}
	if old >= 0 {
		r.OldPID = old
	}
	r.Release, r.Variant, r.Started, r.Took = k.Release, k.Variant, start, time.Since(start)
	klog.Infof("%s started (pid %d, replaced %d) in %s", what, r.PID, r.OldPID, r.Took.Round(10*time.Millisecond))
	return r, nil
}

// startShim starts s on the node, or keeps the shim running as s asks.
func (n *Node) startShim(ctx context.Context, s Shim) error {
	inNode, err := n.cluster.stage(s.Binary, filepath.Join(s.Release, s.Variant, "dockershim"))
	if err != nil {
		return err
	}
	out, err := n.Exec(ctx, append([]string{supervisor, "shim", inNode}, s.Args...)...)
	if err != nil {
		return fmt.Errorf("dockershim %s/%s: %w", s.Release, s.Variant, err)
	}
	r, err := n.parseRun(out)
	if err != nil {
		return fmt.Errorf("dockershim %s/%s: %w", s.Release, s.Variant, err)
	}
	if r.OldPID == r.PID {
		klog.Infof("node %s: dockershim %s/%s kept (pid %d)", n.Name, s.Release, s.Variant, r.PID)
	} else {
		klog.Infof("node %s: dockershim %s/%s started (pid %d, replaced %d)", n.Name, s.Release, s.Variant, r.PID, r.OldPID)
	}
	return nil
}

// StopKubelet stops the node's kubelet (SIGTERM, then SIGKILL after 30 s)
// and leaves dockerd and every container running, as an operator does
// before switching the binary by hand. It returns the stopped pid (0 if
// none ran).
func (n *Node) StopKubelet(ctx context.Context) (int, error) {
	out, err := n.Exec(ctx, supervisor, "stop-kubelet")
	if err != nil {
		return 0, fmt.Errorf("node %s: stopping the kubelet: %w", n.Name, err)
	}
	ls := docker.Lines(out)
	if len(ls) == 0 {
		return 0, fmt.Errorf("node %s: stopping the kubelet: the supervisor said nothing", n.Name)
	}
	old, err := strconv.Atoi(fields(ls[len(ls)-1])["old"])
	if err != nil {
		return 0, fmt.Errorf("node %s: stopping the kubelet: unexpected %q", n.Name, out)
	}
	klog.Infof("node %s: kubelet stopped (pid %d)", n.Name, old)
	return old, nil
}

// KubeProxyArgs are kube-proxy 1.9's flags for a node: iptables mode in
// the node's network namespace, conntrack left as the host has it (its
// settings are not per namespace).
func KubeProxyArgs(nodeName, kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--proxy-mode=iptables",
		"--cluster-cidr=" + ClusterCIDR,
		"--hostname-override=" + nodeName,
		"--conntrack-max-per-core=0",
		"--conntrack-tcp-timeout-established=0s",
		"--conntrack-tcp-timeout-close-wait=0s",
		// Health checks on the node's loopback only, as metrics already
		// are (the health port's default is every address; 1.9's flag
		// takes the IP, --healthz-port the port).
		"--healthz-bind-address=127.0.0.1",
		"--v=2",
	}
}

// StartKubeProxy starts (or restarts) kube-proxy from binary (on the
// host) with KubeProxyArgs; kubeconfig is a path in the node.
func (n *Node) StartKubeProxy(ctx context.Context, binary, kubeconfig string) (Run, error) {
	what := fmt.Sprintf("node %s: kube-proxy", n.Name)
	inNode, err := n.cluster.stage(binary, filepath.Join("kube-proxy", "kube-proxy"))
	if err != nil {
		return Run{}, fmt.Errorf("%s: %w", what, err)
	}
	start := time.Now()
	out, err := n.Exec(ctx, append([]string{supervisor, "kube-proxy", inNode}, KubeProxyArgs(n.Name, kubeconfig)...)...)
	if err != nil {
		return Run{}, fmt.Errorf("%s: %w", what, err)
	}
	r, err := n.parseRun(out)
	if err != nil {
		return Run{}, fmt.Errorf("%s: %w", what, err)
	}
	r.Started, r.Took = start, time.Since(start)
	return r, nil
}

// Status returns the pids of the node's kubelet and kube-proxy (0: not running).
func (n *Node) Status(ctx context.Context) (kubelet, kubeProxy int, err error) {
	out, err := n.Exec(ctx, supervisor, "status")
	if err != nil {
		return 0, 0, fmt.Errorf("node %s: status: %w", n.Name, err)
	}
	f := fields(out)
	kubelet, err1 := strconv.Atoi(f["kubelet"])
	kubeProxy, err2 := strconv.Atoi(f["kube-proxy"])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("node %s: status: unexpected %q", n.Name, out)
	}
	return kubelet, kubeProxy, nil
}

// parseRun reads the supervisor's "old=<pid> pid=<pid> log=<file>" line.
func (n *Node) parseRun(out string) (Run, error) {
	ls := docker.Lines(out)
	if len(ls) == 0 {
		return Run{}, fmt.Errorf("supervisor said nothing")
	}
	f := fields(ls[len(ls)-1])
	pid, err1 := strconv.Atoi(f["pid"])
	old, err2 := strconv.Atoi(f["old"])
	logf := f["log"]
	if err1 != nil || err2 != nil || !strings.HasPrefix(logf, NodeLogDir+"/") {
		return Run{}, fmt.Errorf("unexpected supervisor output %q", out)
	}
	return Run{PID: pid, OldPID: old, Log: filepath.Join(n.LogDir(), strings.TrimPrefix(logf, NodeLogDir+"/"))}, nil
}

func fields(line string) map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(line) {
		if k, v, ok := strings.Cut(w, "="); ok {
			m[k] = v
		}
	}
	return m
}
