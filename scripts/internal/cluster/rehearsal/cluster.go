package rehearsal

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/sync/errgroup"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/cluster/controlplane"
	"kubelet-toolchain/scripts/internal/cluster/nodes"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/execx"
)

// Network is the rehearsal engine's bridge: node containers sit on it and
// the API server listens on its address. The default range is RFC 2544's
// benchmarking range (unlikely on a real network) and differs from the
// node e2e's engine, so both can run at once.
type Network struct {
	Bridge string // default: the instance's (Layout.DefaultNetwork)
	CIDR   string // the bridge's address
}

// Address is the bridge's own IP (the API server's).
func (n Network) Address() (string, error) {
	ip, _, err := net.ParseCIDR(n.CIDR)
	if err != nil {
		return "", fmt.Errorf("bridge address %q: %w", n.CIDR, err)
	}
	return ip.String(), nil
}

// clusterName prefixes node containers and volumes.
const clusterName = "rehearsal"

// baseImages are the images every node needs: the default workloads' and
// the pause image of every release (a kept cluster takes any TO its control
// plane supports; the tags share one image).
// workloadImage is the default workloads' image (tools/images/workload).
const workloadImage = "e2e.local/workload:1"

func baseImages(m *matrix.Matrix) []string {
	images := []string{workloadImage}
	for _, r := range m.Releases {
		if r.PauseImage != "" && !slices.Contains(images, r.PauseImage) {
			images = append(images, r.PauseImage)
		}
	}
	return images
}

// UpOptions describe the cluster to bring up.
type UpOptions struct {
	Matrix *matrix.Matrix
	// Instance is which of the machine's rehearsals (Layout.Instance).
	Instance int
	From     *matrix.Release
	Nodes    int
	Network  Network
	// ControlPlane is the control plane's release (ControlPlaneFor), and
	// ControlPlaneBin holds its kube-apiserver & co. (make control-plane).
	ControlPlane    *matrix.Release
	ControlPlaneBin string
	Log             io.Writer
	// Workloads is the digest of what the run will apply (WorkloadsDigest);
	// "" for a cluster brought up without a run.
	Workloads string
}

// state is what a running cluster was brought up with (state.json), so a
// later make rehearsal can reuse it and rehearsal-down can find it.
type state struct {
	// Lockdown is the lockdown the cluster was brought up with
	// (clusterLockdown); an older cluster is not reused.
	Lockdown int    `json:"lockdown,omitempty"`
	From     string `json:"from"`
	// ControlPlane is the control plane's release ("" before there was a
	// choice: 1.9.11).
	ControlPlane string      `json:"controlPlane,omitempty"`
	Network      Network     `json:"network"`
	Image        string      `json:"image"`
	Nodes        []nodeState `json:"nodes"`
	UpAt         string      `json:"upAt"`
	// Workloads is the digest of the workloads and images a run applied
	// (WorkloadsDigest); "" while none has.
	Workloads string `json:"workloads,omitempty"`
}

// clusterLockdown counts the lockdowns of the cluster's sockets; 1: TLS
// client certificates for etcd, kubelets and API server, no anonymous
// requests, no profiling.
const clusterLockdown = 1

type nodeState struct {
	Name  string `json:"name"`
	Index int    `json:"index"`
}

// Cluster is a running rehearsal cluster.
type Cluster struct {
	Layout  Layout
	CP      *controlplane.ControlPlane
	Kubectl Kubectl
	Nodes   []*nodes.Node
	From    *matrix.Release
	nodes   *nodes.Cluster
	log     func(string, ...any)
	// Timings of bring-up, for the closing report.
	Timings   map[string]time.Duration
	timingsMu sync.Mutex
}

func logger(w io.Writer) func(string, ...any) {
	return func(f string, a ...any) { fmt.Fprintf(w, "rehearsal: "+f+"\n", a...) }
}

func (l Layout) engine() nodes.Engine {
	return nodes.Engine{Socket: filepath.Join(l.Engine(), "docker.sock")}
}

// engineScript runs tools/engine-up.sh or engine-down.sh for the
// rehearsal's own engine.
func (l Layout) engineScript(ctx context.Context, script string, nw Network, log io.Writer, args ...string) error {
	_, err := execx.Run(ctx, execx.Cmd{
		Name: filepath.Join(l.Root, "tools", script), Args: args, Dir: l.Root, Stdout: log,
		Env: []string{"ENGINE_DIR=" + l.Engine(), "ENGINE_BRIDGE=" + nw.Bridge, "ENGINE_BRIDGE_CIDR=" + nw.CIDR},
	})
	return err
}

// kubeletFor builds (or reuses) a release's kubelet, and from 1.24 the
// same variant of the dockershim it runs on.
func kubeletFor(ctx context.Context, m *matrix.Matrix, r *matrix.Release, v matrix.Variant, log io.Writer) (kubelet, error) {
	k := kubelet{r: r, v: v, pause: r.PauseImage}
	res, err := build.Kubelet(ctx, build.Options{Matrix: m, Release: r, Variant: v, Log: log})
	if err != nil {
		return k, fmt.Errorf("kubelet %s %s: %w", r.Release, v, err)
	}
	k.binary = res.Path("kubelet")
	if !r.RunsOnShim() {
		return k, nil
	}
	sr, err := m.ShimRelease()
	if err != nil {
		return k, fmt.Errorf("kubelet %s %s: %w", r.Release, v, err)
	}
	if res, err = build.Kubelet(ctx, build.Options{Matrix: m, Release: sr, Variant: v, Log: log}); err != nil {
		return k, fmt.Errorf("kubelet %s %s: its dockershim %s: %w", r.Release, v, sr.Release, err)
	}
	k.shim = &nodes.Shim{Release: sr.Release, Variant: string(v), Binary: res.Path("dockershim")}
	k.pause = sr.PauseImage
	return k, nil
}

// Up brings a cluster up, or reuses the running one if it was brought up
// with the same FROM, node count and network.
func Up(ctx context.Context, o UpOptions) (*Cluster, error) {
	l := NewLayoutFor(o.Matrix.Root, o.Instance)
	log := logger(o.Log)
	addr, err := o.Network.Address()
	if err != nil {
		return nil, err
	}
	if err := CheckNodes(o.Nodes); err != nil {
		return nil, err
	}
	c := &Cluster{
		Layout: l, From: o.From, log: log, Timings: map[string]time.Duration{},
		CP:      &controlplane.ControlPlane{Layout: l.ControlPlane(), Release: o.ControlPlane.Release, BinDir: o.ControlPlaneBin, Address: addr, Ports: l.Ports(), Log: log},
		Kubectl: Kubectl{Bin: filepath.Join(o.ControlPlaneBin, "kubectl"), Kubeconfig: l.ControlPlane().Kubeconfig()},
	}
	if err := c.step("engine", func() error { return l.engineScript(ctx, "engine-up.sh", o.Network, o.Log) }); err != nil {
		return nil, err
	}
	c.nodes = &nodes.Cluster{Engine: l.engine(), Name: clusterName, Root: l.Root, WorkDir: l.Dir}
	if st, ok := c.reusable(ctx, o); ok {
		log("reusing the running cluster (FROM %s, %d nodes, up since %s)", st.From, len(st.Nodes), st.UpAt)
		if err := c.attach(ctx, st); err != nil {
			return nil, err
		}
		return c, c.KubeProxiesRunning(ctx)
	}
	// Anything left of an earlier cluster goes first; the engine stays up.
	if err := Down(ctx, l, o.Network, false, o.Log); err != nil {
		return nil, err
	}
	fromKubelet, err := c.prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := c.step("control plane", func() error { return c.startControlPlane(ctx) }); err != nil {
		return nil, err
	}
	st := state{Lockdown: clusterLockdown, From: o.From.Release, ControlPlane: o.ControlPlane.Release, Network: o.Network, Image: c.nodes.Image, UpAt: time.Now().UTC().Format(time.RFC3339)}
	if err := c.step("nodes", func() (err error) { st.Nodes, err = c.createNodes(ctx, o.Nodes); return err }); err != nil {
		return nil, err
	}
	if err := c.step("images", func() error { return c.LoadImages(ctx, baseImages(o.Matrix)) }); err != nil {
		return nil, err
	}
	if err := c.step("kubelets "+o.From.Release, func() error { return c.startNodeDaemons(ctx, o, fromKubelet) }); err != nil {
		return nil, err
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := fsutil.WriteFileAtomic(filepath.Join(l.Dir, "state.json"), b, 0o644); err != nil {
		return nil, err
	}
	// Other checkouts' rehearsals wait for this one's down (LockMachine).
	if err := setClusterOwner(l, true); err != nil {
		return nil, err
	}
	return c, nil
}

// step runs one of Up's steps, timed into c.Timings and logged; steps run
// side by side where they do not wait on each other.
func (c *Cluster) step(name string, f func() error) error {
	start := time.Now()
	err := f()
	c.timingsMu.Lock()
	c.Timings[name] = time.Since(start)
	c.timingsMu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	c.log("%s: %s", name, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// prepare makes what the nodes need and returns FROM's kubelet: FROM's
// kubelet, the node image and the node tools need nothing of each other
// and are made side by side. The control plane starts after them, off the
// busiest minutes (its start takes seconds). A kube-scheduler (CI,
// 2026-11-26) and a kube-controller-manager (2026-11-27) reported dead at
// start "without a word" were alive: the health check had read their
// command line before the kernel filled it in (execx.StartDaemon now
// returns only once it can be read).
func (c *Cluster) prepare(ctx context.Context, o UpOptions) (kubelet, error) {
	var fromKubelet kubelet
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return c.step("kubelet "+o.From.Release, func() (err error) {
			fromKubelet, err = kubeletFor(gctx, o.Matrix, o.From, matrix.Vanilla, o.Log)
			return err
		})
	})
	g.Go(func() error {
		return c.step("node image", func() (err error) {
			c.nodes.Image, err = nodes.EnsureImage(gctx, nodes.ImageOptions{Engine: c.nodes.Engine, Dir: nodes.ImageCacheDir()})
			return err
		})
	})
	g.Go(func() error {
		return c.step("node tools", func() (err error) {
			if c.nodes.CNIBinDir, err = nodes.BuildCNIPlugins(gctx, filepath.Join(o.Matrix.OutputDir(), "cni")); err != nil {
				return err
			}
			if needsClamp() {
				c.nodes.RuncClamp = filepath.Join(c.Layout.Dir, "runc-clamp")
				return nodes.BuildRuncClamp(gctx, c.Layout.Root, c.nodes.RuncClamp)
			}
			return nil
		})
	})
	return fromKubelet, g.Wait()
}

// startControlPlane starts etcd and the control plane's daemons with a
// fresh PKI.
func (c *Cluster) startControlPlane(ctx context.Context) (err error) {
	if c.CP.Etcd, err = controlplane.EnsureEtcd(ctx, c.Layout.Cache(), c.log); err != nil {
		return err
	}
	if err := c.CP.WritePKI(); err != nil {
		return err
	}
	return c.CP.Start(ctx)
}

// createNodes creates node-1..node-count side by side, each with its
// credentials, and routes their pod CIDRs.
func (c *Cluster) createNodes(ctx context.Context, count int) ([]nodeState, error) {
	var states []nodeState
	c.Nodes = make([]*nodes.Node, count)
	g, gctx := errgroup.WithContext(ctx)
	for i := 1; i <= count; i++ {
		name := fmt.Sprintf("node-%d", i)
		states = append(states, nodeState{Name: name, Index: i})
		g.Go(func() error {
			if err := c.CP.NodeCredentials(c.Layout.NodeConfig(name), nodes.NodeConfigDir, name); err != nil {
				return err
			}
			n, err := c.nodes.Create(gctx, nodes.Spec{Name: name, Index: i, ConfigDir: c.Layout.NodeConfig(name)})
			c.Nodes[i-1] = n
			if err != nil {
				return err
			}
			// The node's address is known now: the API server
			// dials its kubelet there and checks this certificate.
			return c.CP.KubeletServing(c.Layout.NodeConfig(name), name, n.IP())
		})
	}
	if err := g.Wait(); err != nil {
		return states, err
	}
	return states, c.wire(ctx)
}

// startNodeDaemons starts kube-proxy and FROM's kubelet on every node and
// waits for the nodes Ready with their kube-proxies running.
func (c *Cluster) startNodeDaemons(ctx context.Context, o UpOptions, fromKubelet kubelet) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, n := range c.Nodes {
		g.Go(func() error {
			if _, err := n.StartKubeProxy(gctx, filepath.Join(o.ControlPlaneBin, "kube-proxy"), filepath.Join(nodes.NodeConfigDir, "kube-proxy.kubeconfig")); err != nil {
				return err
			}
			return c.StartKubelet(gctx, n, fromKubelet)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := c.WaitNodesReady(ctx, o.From, matrix.Vanilla, 3*time.Minute); err != nil {
		return err
	}
	return c.KubeProxiesRunning(ctx)
}

// wire routes every node's pod CIDR to it from every other node.
func (c *Cluster) wire(ctx context.Context) error {
	for _, n := range c.Nodes {
		for _, m := range c.Nodes {
			if m != n {
				if err := n.AddRoute(ctx, m.PodCIDR(), m.IP()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// reusable says whether a running cluster matches o.
func (c *Cluster) reusable(ctx context.Context, o UpOptions) (state, bool) {
	var st state
	b, err := os.ReadFile(filepath.Join(c.Layout.Dir, "state.json"))
	if err != nil || json.Unmarshal(b, &st) != nil {
		return st, false
	}
	cp := st.ControlPlane
	if cp == "" {
		cp = "1.9.11"
	}
	if st.From != o.From.Release || cp != o.ControlPlane.Release || len(st.Nodes) != o.Nodes || st.Network != o.Network || !c.CP.Running() {
		return st, false
	}
	notAfter, err := certNotAfter(filepath.Join(c.Layout.ControlPlane().PKI(), "ca.crt"))
	if err != nil {
		c.log("the running cluster's certificates: %v: a fresh cluster", err)
		return st, false
	}
	if why := reuseRefusal(st, notAfter, time.Now(), o.Workloads); why != "" {
		c.log("%s: a fresh cluster", why)
		return st, false
	}
	for _, ns := range st.Nodes {
		if _, err := c.nodes.Get(ctx, nodes.Spec{Name: ns.Name, Index: ns.Index, ConfigDir: c.Layout.NodeConfig(ns.Name)}); err != nil {
			return st, false
		}
	}
	return st, true
}

// attach picks up the nodes of a running cluster.
func (c *Cluster) attach(ctx context.Context, st state) error {
	c.nodes.Image = st.Image
	c.Nodes = nil
	for _, ns := range st.Nodes {
		n, err := c.nodes.Get(ctx, nodes.Spec{Name: ns.Name, Index: ns.Index, ConfigDir: c.Layout.NodeConfig(ns.Name)})
		if err != nil {
			return err
		}
		c.Nodes = append(c.Nodes, n)
	}
	return nil
}

// KubeProxiesRunning checks every node's kube-proxy still runs: the
// supervisor sees only that it started, and one that exits on a bad flag
// value leaves Services unserved, which the prober would take for ports
// that never answered.
func (c *Cluster) KubeProxiesRunning(ctx context.Context) error {
	for _, n := range c.Nodes {
		_, proxy, err := n.Status(ctx)
		if err != nil {
			return err
		}
		if proxy == 0 {
			return fmt.Errorf("node %s: kube-proxy is not running; see its log under %s", n.Name, n.LogDir())
		}
	}
	return nil
}

// StartKubelet starts (or switches to) kubelet k on n, talking to the API
// server with the node's credentials.
func (c *Cluster) StartKubelet(ctx context.Context, n *nodes.Node, k kubelet) error {
	_, err := c.startKubelet(ctx, n, k, armed{})
	return err
}

// armed is what the faults on a switch change in the kubelet's start: its
// extra flags (last), and the engine socket the node's dockershim dials
// (the node's dockerd when empty).
type armed struct {
	flags          []string
	dockerEndpoint string
}

// startKubelet is StartKubelet returning the run (its pid, log and start),
// with the faults' changes.
func (c *Cluster) startKubelet(ctx context.Context, n *nodes.Node, k kubelet, a armed) (nodes.Run, error) {
	extra := a.flags
	var shim *nodes.Shim
	if k.shim != nil {
		s := *k.shim
		s.Args = nodes.ShimArgs(k.pause, a.dockerEndpoint)
		shim = &s
	} else if a.dockerEndpoint != "" {
		extra = append([]string{"--docker-endpoint=" + a.dockerEndpoint}, extra...)
	}
	args, err := nodes.KubeletArgs(k.r.Release, nodes.KubeletOptions{
		NodeName: n.Name, NodeIP: n.IP(),
		Kubeconfig:   filepath.Join(nodes.NodeConfigDir, "kubelet.kubeconfig"),
		ClientCAFile: filepath.Join(nodes.NodeConfigDir, "ca.crt"),
		TLSCertFile:  filepath.Join(nodes.NodeConfigDir, "kubelet-serving.crt"),
		TLSKeyFile:   filepath.Join(nodes.NodeConfigDir, "kubelet-serving.key"),
		PauseImage:   k.pause,
		AllowSwap:    nodes.HostHasSwap(),
		// Periodic syncs every 10 s: a switch is judged after every pod
		// had a few, not after the default minute.
		Extra: append([]string{"--sync-frequency=10s"}, extra...),
	})
	if err != nil {
		return nodes.Run{}, err
	}
	return n.StartKubelet(ctx, nodes.Kubelet{Release: k.r.Release, Variant: string(k.v), Binary: k.binary, Args: args, Shim: shim})
}

// LoadImages loads refs into every node: tarballs as they are; names from
// the rehearsal's engine, or else saved once from the machine's own
// engine (read only) into a tarball.
func (c *Cluster) LoadImages(ctx context.Context, refs []string) error {
	var resolved []string
	for _, ref := range refs {
		if st, err := os.Stat(ref); err == nil && st.Mode().IsRegular() {
			resolved = append(resolved, ref)
			continue
		}
		if _, err := c.nodes.Engine.Run(ctx, "image", "inspect", ref); err == nil {
			resolved = append(resolved, ref)
			continue
		}
		tar := filepath.Join(c.Layout.Dir, "images", strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar")
		if err := os.MkdirAll(filepath.Dir(tar), 0o755); err != nil {
			return err
		}
		if _, err := docker.Machine().Run(ctx, "save", "-o", tar+".tmp", ref); err != nil {
			os.Remove(tar + ".tmp")
			return fmt.Errorf("image %s: on neither the rehearsal's engine nor the machine's: %w", ref, err)
		}
		if err := os.Rename(tar+".tmp", tar); err != nil {
			return err
		}
		resolved = append(resolved, tar)
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, n := range c.Nodes {
		g.Go(func() error { return n.LoadImages(gctx, resolved...) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return nil
}

// needsClamp: without CAP_SYS_RESOURCE a negative oom_score_adj fails, and
// runc with it (the nodes' dockerd then needs the clamping wrapper).
func needsClamp() bool {
	err := os.WriteFile("/proc/self/oom_score_adj", []byte("-1000"), 0)
	if err == nil {
		os.WriteFile("/proc/self/oom_score_adj", []byte("0"), 0)
	}
	return err != nil
}

// Down removes everything a rehearsal made: the node containers, volumes
// and networks carrying our label, the control plane's daemons, the
// rehearsal's engine and bridge, and the cluster's state (etcd data,
// credentials). Logs and the last report stay. Nothing else is touched.
func Down(ctx context.Context, l Layout, nw Network, engineToo bool, log io.Writer) error {
	say := logger(log)
	var errs []error
	if _, err := os.Stat(filepath.Join(l.Engine(), "docker.sock")); err == nil {
		// A socket left by a killed dockerd, or from before a reboot, is
		// not an engine: its containers are then engine-down's to remove
		// (it kills what our containerd's shims still run).
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := l.engine().Run(actx, "version", "--format", "{{.Server.Version}}")
		cancel()
		switch {
		case err != nil && engineToo:
			say("the rehearsal's engine does not answer (%v): engine-down removes what is left of it", firstLine(err.Error()))
		case err != nil:
			errs = append(errs, fmt.Errorf("the rehearsal's engine does not answer: %w", err))
		default:
			if err := nodes.RemoveAll(ctx, l.engine(), l.Root); err != nil {
				errs = append(errs, err)
			}
		}
	}
	cp := &controlplane.ControlPlane{Layout: l.ControlPlane()}
	if stopped, err := cp.Stop(); err != nil {
		errs = append(errs, err)
	} else if len(stopped) > 0 {
		say("stopped %s", strings.Join(stopped, ", "))
	}
	if engineToo {
		if err := l.engineScript(ctx, "engine-down.sh", nw, log, "--purge"); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		for _, d := range []string{l.ControlPlane().EtcdData(), l.ControlPlane().PKI(), filepath.Join(l.Dir, "nodes"), filepath.Join(l.Dir, "run"), filepath.Join(l.Dir, "state.json"), l.ControlPlane().Kubeconfig()} {
			if err := fsutil.RemoveAll(d); err != nil {
				errs = append(errs, err)
			}
		}
		if err := setClusterOwner(l, false); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// reuseMinValidity is how long a reused cluster's certificates must stay
// valid: the longest rehearsal (operator's workloads, many nodes) with
// room to spare.
const reuseMinValidity = 3 * time.Hour

// reuseRefusal says why a running cluster (st, its CA valid until
// notAfter) must not serve a run that applies workloads, or "".
func reuseRefusal(st state, notAfter, now time.Time, workloads string) string {
	if st.Lockdown != clusterLockdown {
		return fmt.Sprintf("the running cluster was brought up with lockdown %d, this toolchain's is %d", st.Lockdown, clusterLockdown)
	}
	if left := notAfter.Sub(now); left < reuseMinValidity {
		return fmt.Sprintf("the running cluster's certificates expire at %s (%s left, a run needs %s)", notAfter.UTC().Format(time.RFC3339), left.Round(time.Minute), reuseMinValidity)
	}
	if workloads != "" && st.Workloads != "" && st.Workloads != workloads {
		return "the running cluster ran other workloads or images (its pods would be judged again)"
	}
	return ""
}

// certNotAfter reads a PEM certificate's expiry.
func certNotAfter(path string) (time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return time.Time{}, fmt.Errorf("%s: no PEM certificate", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return cert.NotAfter, nil
}

// WorkloadsDigest names what a run applies: the manifests directory's
// content (the built-in workloads when dir is "") and the images loaded.
func WorkloadsDigest(dir string, images []string) (string, error) {
	h := "built-in"
	if dir != "" {
		var err error
		if h, err = dirhash.HashDir(dir, "manifests", dirhash.Hash1); err != nil {
			return "", fmt.Errorf("MANIFESTS=%s: %w", dir, err)
		}
	}
	imgs := append([]string(nil), images...)
	sort.Strings(imgs)
	return h + " images=" + strings.Join(imgs, ","), nil
}

// recordWorkloads notes in state.json what this run applied.
func (c *Cluster) recordWorkloads(digest string) error {
	path := filepath.Join(c.Layout.Dir, "state.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	st.Workloads = digest
	b, _ = json.MarshalIndent(st, "", "  ")
	return fsutil.WriteFileAtomic(path, b, 0o644)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
