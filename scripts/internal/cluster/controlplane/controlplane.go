// Package controlplane runs a Kubernetes control plane on the machine for
// whatever needs an API server: Debian's etcd, and kube-apiserver,
// kube-controller-manager and kube-scheduler built by the toolchain, as
// daemons of ours with client-certificate TLS from a CA of their own. Its
// state lives under one directory (Layout), so stopping it touches nothing
// else.
package controlplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/tools/execx"
	"kubelet-toolchain/tools/poll"
)

// Ports are a control plane's. The API server listens only on the
// rehearsal engine's bridge (the nodes' side) and is reached from the
// machine on that address too; etcd and the other components' health
// ports stay on loopback. None is a default, so a real control plane on
// the machine is never in the way (or reached).
type Ports struct {
	API, EtcdClient, EtcdPeer, Scheduler, Controller int
}

// PortsFor are the ports of the machine's n-th control plane (0: make
// rehearsal's), 10 apart, so control planes run side by side.
func PortsFor(n int) Ports {
	return Ports{API: 26443 + n, EtcdClient: 22379 + 10*n, EtcdPeer: 22380 + 10*n, Scheduler: 20251 + 10*n, Controller: 20252 + 10*n}
}

// The cluster's networks, inside its nodes.
const (
	ServiceCIDR         = "10.96.0.0/16"
	ClusterCIDR         = "10.244.0.0/16"
	kubernetesServiceIP = "10.96.0.1"
)

// Layout is where a control plane keeps its state: all of it under Dir,
// so stopping and removing it touches nothing else.
type Layout struct{ Dir string }

func (l Layout) PKI() string        { return filepath.Join(l.Dir, "pki") }
func (l Layout) EtcdData() string   { return filepath.Join(l.Dir, "etcd") }
func (l Layout) Logs() string       { return filepath.Join(l.Dir, "logs") }
func (l Layout) Run() string        { return filepath.Join(l.Dir, "run") }
func (l Layout) Kubeconfig() string { return filepath.Join(l.Dir, "kubeconfig") }

// ControlPlane is etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, run as daemons of ours on the machine.
type ControlPlane struct {
	Layout Layout
	// Release is the binaries' release (their flags differ by release).
	Release string
	// BinDir holds the control plane's binaries (make control-plane).
	BinDir string
	// Etcd is the etcd binary.
	Etcd string
	// Address is the bridge address the API server listens on.
	Address string
	Ports   Ports
	Log     func(string, ...any)
}

// Server is the API server's URL.
func (cp *ControlPlane) Server() string {
	return "https://" + net.JoinHostPort(cp.Address, strconv.Itoa(cp.Ports.API))
}

// WritePKI makes the cluster's CA, the control plane's certificates and
// kubeconfigs, and the admin kubeconfig (Layout.Kubeconfig).
func (cp *ControlPlane) WritePKI() error {
	dir := cp.Layout.PKI()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := NewCA("kubelet-toolchain rehearsal CA")
	if err != nil {
		return err
	}
	if err := ca.Write(dir); err != nil {
		return err
	}
	ips := []net.IP{net.ParseIP(cp.Address), net.ParseIP("127.0.0.1"), net.ParseIP(kubernetesServiceIP)}
	hosts := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	if err := ca.Serving(dir, "apiserver", hosts, ips); err != nil {
		return err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	for _, name := range []string{"etcd-server", "etcd-peer"} {
		if err := ca.Peer(dir, name, []string{"localhost"}, loopback); err != nil {
			return err
		}
	}
	// The controller manager's and the scheduler's health over TLS (1.22+).
	for _, name := range []string{"controller-manager-serving", "scheduler-serving"} {
		if err := ca.Serving(dir, name, []string{"localhost"}, loopback); err != nil {
			return err
		}
	}
	for name, id := range map[string]Identity{
		"admin": AdminIdentity, "controller-manager": ControllerManagerIdentity,
		"scheduler": SchedulerIdentity, "kube-proxy": KubeProxyIdentity,
		"apiserver-kubelet-client": APIServerKubeletIdentity,
		"apiserver-etcd-client":    APIServerEtcdIdentity,
	} {
		if err := ca.Client(dir, name, id); err != nil {
			return err
		}
	}
	if err := ServiceAccountKey(dir); err != nil {
		return err
	}
	for _, name := range []string{"controller-manager", "scheduler"} {
		if err := writeKubeconfig(filepath.Join(dir, name+".kubeconfig"), cp.Server(), filepath.Join(dir, "ca.crt"), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return writeKubeconfig(cp.Layout.Kubeconfig(), cp.Server(), filepath.Join(dir, "ca.crt"), filepath.Join(dir, "admin"))
}

// NodeCredentials writes into dir (a node's config directory, mounted in
// the node at mountPoint) the CA, the kubelet's and kube-proxy's client
// certificates and their kubeconfigs, which name files under mountPoint.
func (cp *ControlPlane) NodeCredentials(dir, mountPoint, node string) error {
	ca, err := LoadCA(cp.Layout.PKI())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(cp.Layout.PKI(), "ca.crt")); err != nil {
		return err
	} else if err := os.WriteFile(filepath.Join(dir, "ca.crt"), b, 0o644); err != nil {
		return err
	}
	if err := ca.Client(dir, "kubelet", NodeIdentity(node)); err != nil {
		return err
	}
	if err := ca.Client(dir, "kube-proxy", KubeProxyIdentity); err != nil {
		return err
	}
	for _, name := range []string{"kubelet", "kube-proxy"} {
		if err := writeKubeconfig(filepath.Join(dir, name+".kubeconfig"), cp.Server(), filepath.Join(mountPoint, "ca.crt"), filepath.Join(mountPoint, name)); err != nil {
			return err
		}
	}
	return nil
}

// KubeletServing issues a node's kubelet serving certificate (for its
// name and the address the API server dials, InternalIP) into dir as
// kubelet-serving.crt/.key: the API server checks it against the cluster
// CA (--kubelet-certificate-authority), not the kubelet's self-signed one.
func (cp *ControlPlane) KubeletServing(dir, node, ip string) error {
	ca, err := LoadCA(cp.Layout.PKI())
	if err != nil {
		return err
	}
	addr := net.ParseIP(ip)
	if addr == nil {
		return fmt.Errorf("node %s: kubelet serving certificate: bad address %q", node, ip)
	}
	return ca.Serving(dir, "kubelet-serving", []string{node}, []net.IP{addr})
}

// daemon describes one control-plane component.
type daemon struct {
	name string
	bin  string
	args []string
	// health is a URL answering 200 "ok" once the component serves.
	health string
}

// Commands are the Kubernetes components' command lines (binary, then
// flags) as Start runs them; etcd, Debian's, is left out. Their flags
// differ by release: a test runs each against the built binaries.
func (cp *ControlPlane) Commands() map[string][]string {
	out := map[string][]string{}
	for _, d := range cp.daemons() {
		if d.name != "etcd" {
			out[d.name] = append([]string{d.bin}, d.args...)
		}
	}
	return out
}

func (cp *ControlPlane) daemons() []daemon {
	return []daemon{cp.etcd(), cp.apiServer(), cp.controllerManager(), cp.scheduler()}
}

func (cp *ControlPlane) pki(f string) string { return filepath.Join(cp.Layout.PKI(), f) }
func (cp *ControlPlane) bin(n string) string { return filepath.Join(cp.BinDir, n) }
func (cp *ControlPlane) etcdURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", cp.Ports.EtcdClient)
}

func (cp *ControlPlane) etcd() daemon {
	p := cp.pki
	etcdURL := cp.etcdURL()
	etcdPeerURL := fmt.Sprintf("https://127.0.0.1:%d", cp.Ports.EtcdPeer)
	return daemon{
		name: "etcd", bin: cp.Etcd,
		args: []string{
			"--name=rehearsal", "--data-dir=" + cp.Layout.EtcdData(),
			"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
			"--listen-peer-urls=" + etcdPeerURL, "--initial-advertise-peer-urls=" + etcdPeerURL,
			"--initial-cluster=rehearsal=" + etcdPeerURL,
			"--listen-metrics-urls=",
			// Any local user could otherwise read secrets or write pods:
			// clients and peers need a certificate from the cluster CA.
			"--cert-file=" + p("etcd-server.crt"), "--key-file=" + p("etcd-server.key"),
			"--client-cert-auth", "--trusted-ca-file=" + p("ca.crt"),
			"--peer-cert-file=" + p("etcd-peer.crt"), "--peer-key-file=" + p("etcd-peer.key"),
			"--peer-client-cert-auth", "--peer-trusted-ca-file=" + p("ca.crt"),
		},
		health: etcdURL + "/health",
	}
}

func (cp *ControlPlane) apiServer() daemon {
	p := cp.pki
	// From 1.20 the API server issues bound service account tokens and
	// requires their issuer and signing key.
	var extra []string
	if cp.minor() >= 20 {
		extra = []string{"--service-account-issuer=https://kubernetes.default.svc.cluster.local", "--service-account-signing-key-file=" + p("sa.key")}
	}
	// 1.24 removed the insecure port (an unknown flag is fatal); before,
	// it served on 8080 unless turned off.
	if cp.minor() < 24 {
		extra = append(extra, "--insecure-port=0")
	}
	return daemon{
		name: "kube-apiserver", bin: cp.bin("kube-apiserver"),
		args: append([]string{
			"--etcd-servers=" + cp.etcdURL(), "--storage-backend=etcd3",
			"--etcd-cafile=" + p("ca.crt"),
			"--etcd-certfile=" + p("apiserver-etcd-client.crt"), "--etcd-keyfile=" + p("apiserver-etcd-client.key"),
			"--anonymous-auth=false", "--profiling=false",
			"--bind-address=" + cp.Address, "--advertise-address=" + cp.Address,
			fmt.Sprintf("--secure-port=%d", cp.Ports.API),
			"--tls-cert-file=" + p("apiserver.crt"), "--tls-private-key-file=" + p("apiserver.key"),
			"--client-ca-file=" + p("ca.crt"),
			"--service-account-key-file=" + p("sa.pub"),
			"--service-cluster-ip-range=" + ServiceCIDR,
			"--authorization-mode=Node,RBAC",
			"--admission-control=NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,NodeRestriction,ResourceQuota",
			"--allow-privileged=true",
			"--kubelet-client-certificate=" + p("apiserver-kubelet-client.crt"),
			"--kubelet-client-key=" + p("apiserver-kubelet-client.key"),
			"--kubelet-certificate-authority=" + p("ca.crt"),
			"--kubelet-preferred-address-types=InternalIP",
			"--cert-dir=" + filepath.Join(cp.Layout.Run(), "apiserver-certs"),
			"--v=1",
		}, extra...),
		health: cp.Server() + "/healthz",
	}
}

func (cp *ControlPlane) controllerManager() daemon {
	p := cp.pki
	serving, health := cp.health("controller-manager", cp.Ports.Controller)
	return daemon{
		name: "kube-controller-manager", bin: cp.bin("kube-controller-manager"),
		args: append([]string{
			"--kubeconfig=" + p("controller-manager.kubeconfig"),
			"--profiling=false", "--leader-elect=false",
			"--service-account-private-key-file=" + p("sa.key"),
			"--root-ca-file=" + p("ca.crt"),
			"--use-service-account-credentials=true",
			"--cluster-signing-cert-file=" + p("ca.crt"), "--cluster-signing-key-file=" + p("ca.key"),
			"--v=1",
		}, serving...),
		health: health,
	}
}

func (cp *ControlPlane) scheduler() daemon {
	serving, health := cp.health("scheduler", cp.Ports.Scheduler)
	return daemon{
		name: "kube-scheduler", bin: cp.bin("kube-scheduler"),
		args: append([]string{
			"--kubeconfig=" + cp.pki("scheduler.kubeconfig"),
			"--profiling=false", "--leader-elect=false", "--v=1",
		}, serving...),
		health: health,
	}
}

// health is how the controller manager or the scheduler serves its
// health, on loopback at the instance's port, and the URL to read it.
// Through 1.21 over plain HTTP (--address/--port; 1.9 has no
// --secure-port yet). From 1.12 they also serve HTTPS, by default on
// every address at fixed ports (10257, 10259): off, as two instances
// would collide there. 1.22's controller manager and 1.23's scheduler
// serve no plain HTTP (--port "has no effect" and takes only 0), so from
// 1.22 both serve health over TLS only, with certificates from the
// cluster CA, authenticating and authorizing by the API server, as
// kubeadm runs them; /healthz is among their always-allowed paths.
// --port=0 still through 1.23: 1.22's scheduler would otherwise serve
// plain HTTP on every address at 10251; 1.24 removed the flag.
func (cp *ControlPlane) health(name string, port int) ([]string, string) {
	p := cp.pki
	switch m := cp.minor(); {
	case m >= 22:
		args := []string{
			"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
			"--tls-cert-file=" + p(name+"-serving.crt"), "--tls-private-key-file=" + p(name+"-serving.key"),
			"--authentication-kubeconfig=" + p(name+".kubeconfig"), "--authorization-kubeconfig=" + p(name+".kubeconfig"),
		}
		if m < 24 { // 1.24 removed --port (an unknown flag is fatal)
			args = append(args, "--port=0")
		}
		return args, fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	case m >= 12:
		return []string{"--address=127.0.0.1", fmt.Sprintf("--port=%d", port), "--secure-port=0"}, fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	default:
		return []string{"--address=127.0.0.1", fmt.Sprintf("--port=%d", port)}, fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	}
}

// minor is the binaries' minor version (9 for 1.9.11).
func (cp *ControlPlane) minor() int {
	v, _ := matrix.ParseVersion(cp.Release)
	return v.Minor
}

func (cp *ControlPlane) pidFile(name string) string {
	return filepath.Join(cp.Layout.Run(), name+".pid")
}

// Start starts every component not already running (ours, by pid file and
// command line) and waits until each answers its health check.
func (cp *ControlPlane) Start(ctx context.Context) error {
	if err := os.MkdirAll(cp.Layout.Run(), 0o755); err != nil {
		return err
	}
	client, err := cp.httpClient()
	if err != nil {
		return err
	}
	for _, d := range cp.daemons() {
		if _, err := os.Stat(d.bin); err != nil {
			return fmt.Errorf("control plane: %s: %w (run make control-plane VERSION=%s)", d.name, err, cp.Release)
		}
		logf := filepath.Join(cp.Layout.Logs(), d.name+".log")
		if pid, ok := execx.DaemonPid(cp.pidFile(d.name), cp.Layout.Dir); ok {
			cp.Log("%s already running (pid %d)", d.name, pid)
		} else {
			pid, err := execx.StartDaemon(ctx, execx.Daemon{Name: d.bin, Args: d.args, Log: logf, PidFile: cp.pidFile(d.name), Marker: cp.Layout.Dir})
			if err != nil {
				return fmt.Errorf("starting %s: %w", d.name, err)
			}
			cp.Log("started %s (pid %d), log %s", d.name, pid, logf)
		}
		if err := waitHealthy(ctx, client, d.health, 90*time.Second, func() bool {
			_, ok := execx.DaemonPid(cp.pidFile(d.name), cp.Layout.Dir)
			return ok
		}); err != nil {
			return fmt.Errorf("%s: %w; see %s", d.name, err, logf)
		}
	}
	return cp.applyRBAC(ctx)
}

// kubeletAPIRBAC lets the API server's kubelet client use the kubelet
// API (the kubelets authorize it by Webhook).
//
//go:embed kubelet-api-rbac.yaml
var kubeletAPIRBAC []byte

// applyRBAC applies kubeletAPIRBAC (idempotent: a reused cluster has it).
func (cp *ControlPlane) applyRBAC(ctx context.Context) error {
	_, err := execx.Run(ctx, execx.Cmd{Name: filepath.Join(cp.BinDir, "kubectl"),
		Args:  []string{"--kubeconfig", cp.Layout.Kubeconfig(), "apply", "-f", "-"},
		Stdin: bytes.NewReader(kubeletAPIRBAC), Timeout: time.Minute})
	if err != nil {
		return fmt.Errorf("control plane: the kubelet API's role for %s: %w", APIServerKubeletIdentity.CommonName, err)
	}
	return nil
}

// Stop stops the components, newest first, and reports which ran.
func (cp *ControlPlane) Stop() ([]string, error) {
	var stopped []string
	var errs []error
	ds := cp.daemons()
	for i := len(ds) - 1; i >= 0; i-- {
		ran, err := execx.StopDaemon(cp.pidFile(ds[i].name), cp.Layout.Dir, 20*time.Second)
		if err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", ds[i].name, err))
		}
		if ran {
			stopped = append(stopped, ds[i].name)
		}
	}
	return stopped, errors.Join(errs...)
}

// Running reports whether every component runs (a cluster to reuse).
func (cp *ControlPlane) Running() bool {
	for _, d := range cp.daemons() {
		if _, ok := execx.DaemonPid(cp.pidFile(d.name), cp.Layout.Dir); !ok {
			return false
		}
	}
	return true
}

// httpClient authenticates as the admin and trusts only the cluster CA.
func (cp *ControlPlane) httpClient() (*http.Client, error) {
	pki := cp.Layout.PKI()
	pair, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		return nil, err
	}
	ca, err := readCert(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}},
	}, nil
}

// waitHealthy polls url until it answers 200, the timeout passes or alive
// says the process is gone.
func waitHealthy(ctx context.Context, c *http.Client, url string, timeout time.Duration, alive func() bool) error {
	return poll.Until(ctx, timeout, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true, nil
			}
			err = fmt.Errorf("%s: %s: %s", url, resp.Status, body)
		}
		if !alive() {
			return false, poll.Stop(fmt.Errorf("exited before %s answered (%v)", url, err))
		}
		return false, err
	})
}
