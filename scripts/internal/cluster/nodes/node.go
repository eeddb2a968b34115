package nodes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/execx"
	"kubelet-toolchain/tools/poll"
)

// Paths inside a node.
const (
	nodeSupervisorDir = "/opt/node"            // scripts/node, read-only
	nodeStageDir      = "/opt/kube"            // Cluster.StageDir, read-only
	NodeCNIBinDir     = "/opt/cni/bin"         // Cluster.CNIBinDir, read-only
	NodeCNIConfDir    = "/etc/cni/net.d"       // written by this package, read-only
	NodeConfigDir     = "/etc/kubernetes/node" // Spec.ConfigDir, read-only
	NodeManifestDir   = "/etc/kubernetes/manifests"
	NodeLogDir        = "/var/log/node"
	supervisor        = nodeSupervisorDir + "/supervise.sh"
)

// ClusterCIDR holds every node's pod CIDR (10.244.<Index>.0/24).
const ClusterCIDR = "10.244.0.0/16"

// Cluster is what every node of one rehearsal cluster shares.
type Cluster struct {
	Engine Engine
	// Name prefixes container and volume names ("<Name>-<node>") and is
	// the LabelCluster value.
	Name string
	// Root is the repository root: LabelRehearsal's value, and where
	// scripts/node (the supervisor) is read from.
	Root string
	// Image is the node image (EnsureImage).
	Image string
	// WorkDir is _output/rehearsal: logs/<node>/ and nodes/<node>/ (CNI
	// config, static pod manifests) live under it, and stage/ holds the
	// binaries nodes run (hard links, mounted read-only in every node).
	WorkDir string
	// CNIBinDir holds the CNI plugins (BuildCNIPlugins).
	CNIBinDir string
	// RuncClamp is a static runc wrapper (tools/runcclamp) the inner
	// dockerd uses as its default runtime; empty = plain runc (a machine
	// with CAP_SYS_RESOURCE).
	RuncClamp string
}

// Spec is one node.
type Spec struct {
	// Name is the node name and the container's hostname.
	Name string
	// Index is unique in the cluster, 1..254: the inner dockerd's --bip is
	// 172.30.<Index>.1/24 and the pod CIDR 10.244.<Index>.0/24.
	Index int
	// ConfigDir is a host directory the orchestrator fills (kubeconfig,
	// CA, certificates); read-only at NodeConfigDir. Optional.
	ConfigDir string
}

// Node is a running node container.
type Node struct {
	Spec
	cluster   *Cluster
	Container string // container name
	Volume    string // /var/lib/docker's volume
	ip        string
}

// PodCIDR is the node's pod subnet.
func (n *Node) PodCIDR() string { return fmt.Sprintf("10.244.%d.0/24", n.Index) }

// IP is the node's address on the engine's bridge.
func (n *Node) IP() string { return n.ip }

// LogDir is the host directory with the node's dockerd, kubelet and
// kube-proxy logs.
func (n *Node) LogDir() string { return filepath.Join(n.cluster.WorkDir, "logs", n.Name) }

// ManifestDir is the host directory mounted at NodeManifestDir (the
// kubelet's --pod-manifest-path): write static pods here.
func (n *Node) ManifestDir() string { return filepath.Join(n.nodeDir(), "manifests") }

// DockerSocket is the node's inner engine's socket on the host (for
// reading, e.g. the preflight's node mode).
func (n *Node) DockerSocket() string { return filepath.Join(n.runDir(), "docker.sock") }

// FaultSocket is where a fault proxy in front of the node's dockerd
// listens: host is its path on the host (where the proxy runs), inNode the
// same socket as the node's kubelet dials it.
func (n *Node) FaultSocket() (host, inNode string) {
	return filepath.Join(n.runDir(), "fault.sock"), nodeHostRunDir + "/fault.sock"
}

func (n *Node) runDir() string { return filepath.Join(n.nodeDir(), "run") }

// nodeHostRunDir is runDir in the node: the node's dockerd listens there
// too, so the host reaches it without docker exec.
const nodeHostRunDir = "/host-run"

func (n *Node) nodeDir() string { return filepath.Join(n.cluster.WorkDir, "nodes", n.Name) }

func (c *Cluster) stageDir() string { return filepath.Join(c.WorkDir, "stage") }

func (c *Cluster) labels(node string) []string {
	return []string{"--label", LabelRehearsal + "=" + c.Root, "--label", LabelCluster + "=" + c.Name, "--label", LabelNode + "=" + node}
}

// Create starts a node and returns once its dockerd answers. On failure
// nothing of the node is left on the engine (its logs stay on the host).
func (c *Cluster) Create(ctx context.Context, s Spec) (*Node, error) {
	if s.Index < 1 || s.Index > 254 {
		return nil, fmt.Errorf("node %s: index %d outside 1..254", s.Name, s.Index)
	}
	if c.Name == "" || c.Root == "" || c.Image == "" || c.WorkDir == "" || c.CNIBinDir == "" {
		return nil, fmt.Errorf("node %s: cluster needs Name, Root, Image, WorkDir and CNIBinDir", s.Name)
	}
	n := c.node(s)
	clamp, err := c.prepareHostDirs(n)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if _, err := c.Engine.Run(ctx, append([]string{"volume", "create"}, append(c.labels(s.Name), n.Volume)...)...); err != nil {
		return nil, fmt.Errorf("node %s: volume: %w", s.Name, err)
	}
	if _, err := c.Engine.Run(ctx, c.runArgs(n, clamp)...); err != nil {
		n.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("node %s: docker run: %w", s.Name, err)
	}
	if err := n.waitReady(ctx, 90*time.Second); err != nil {
		n.Remove(context.WithoutCancel(ctx))
		return nil, err
	}
	ip, err := c.Engine.Run(ctx, "inspect", "-f", "{{.NetworkSettings.IPAddress}}", n.Container)
	if err != nil || net.ParseIP(ip) == nil {
		n.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("node %s: no IP address (%q): %v", s.Name, ip, err)
	}
	n.ip = ip
	klog.Infof("node %s (%s) up, dockerd ready in %s", s.Name, ip, time.Since(start).Round(100*time.Millisecond))
	return n, nil
}

// prepareHostDirs makes the node's directories on the host, its CNI
// config, and stages the runc clamp (its path in the node, "" if none).
// A new node's logs start empty; the previous node of that name's are
// kept one generation, as <node>.prev.
func (c *Cluster) prepareHostDirs(n *Node) (clamp string, err error) {
	if _, err := os.Stat(n.LogDir()); err == nil {
		prev := n.LogDir() + ".prev"
		if err := os.RemoveAll(prev); err != nil {
			return "", fmt.Errorf("node %s: %w", n.Spec.Name, err)
		}
		if err := os.Rename(n.LogDir(), prev); err != nil {
			return "", fmt.Errorf("node %s: %w", n.Spec.Name, err)
		}
	}
	for _, d := range []string{n.LogDir(), n.ManifestDir(), filepath.Join(n.nodeDir(), "cni"), n.runDir(), c.stageDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("node %s: %w", n.Spec.Name, err)
		}
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(n.nodeDir(), "cni", "10-rehearsal.conflist"), CNIConfig(n.PodCIDR()), 0o644); err != nil {
		return "", fmt.Errorf("node %s: CNI config: %w", n.Spec.Name, err)
	}
	if c.RuncClamp != "" {
		p, err := c.stage(c.RuncClamp, "runc-clamp")
		if err != nil {
			return "", fmt.Errorf("node %s: %w", n.Spec.Name, err)
		}
		clamp = p
	}
	return clamp, nil
}

// runArgs is the node container's docker run.
func (c *Cluster) runArgs(n *Node, clamp string) []string {
	args := []string{"run", "-d", "--name", n.Container, "--hostname", n.Spec.Name}
	args = append(args, c.labels(n.Spec.Name)...)
	args = append(args,
		"--cgroupns=private", "--cap-add=ALL", "--cap-drop=SYS_RESOURCE",
		// A module loaded in a node is loaded in the machine's kernel (the
		// kubelet modprobes br_netfilter, kube-proxy 1.9 ip_vs even in
		// iptables mode): nodes load none; scripts/prereqs.sh loads what
		// they need up front.
		"--cap-drop=SYS_MODULE",
		"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--device-cgroup-rule=a *:* rwm",
		// Kubelets from 1.16 read the kernel log for OOM kills (their OOM
		// watcher) and refuse to start without it (kind's nodes have it
		// as privileged containers).
		"--device=/dev/kmsg",
		"--sysctl", "net.ipv4.ip_forward=1",
		"--tmpfs", "/run", "--tmpfs", "/tmp",
		"-v", n.Volume+":/var/lib/docker",
		"-v", filepath.Join(c.Root, "scripts", "node")+":"+nodeSupervisorDir+":ro",
		"-v", c.stageDir()+":"+nodeStageDir+":ro",
		"-v", c.CNIBinDir+":"+NodeCNIBinDir+":ro",
		"-v", filepath.Join(n.nodeDir(), "cni")+":"+NodeCNIConfDir+":ro",
		"-v", n.ManifestDir()+":"+NodeManifestDir+":ro",
		"-v", n.LogDir()+":"+NodeLogDir,
		"-v", n.runDir()+":"+nodeHostRunDir,
		"-e", "NODE_NAME="+n.Spec.Name,
		"-e", fmt.Sprintf("DOCKER_BIP=172.30.%d.1/24", n.Spec.Index),
		"-e", "CLUSTER_CIDR="+ClusterCIDR,
		"-e", "RUNC_CLAMP="+clamp,
	)
	if n.Spec.ConfigDir != "" {
		args = append(args, "-v", n.Spec.ConfigDir+":"+NodeConfigDir+":ro")
	}
	args = append(args, "--entrypoint", "/usr/bin/tini", c.Image, "--", supervisor, "boot")
	return args
}

func (c *Cluster) node(s Spec) *Node {
	return &Node{Spec: s, cluster: c, Container: c.Name + "-" + s.Name, Volume: c.Name + "-" + s.Name + "-docker"}
}

// Get returns the running node s of a cluster made earlier (a rehearsal
// reusing its cluster), or an error if that container is not running.
func (c *Cluster) Get(ctx context.Context, s Spec) (*Node, error) {
	n := c.node(s)
	out, err := c.Engine.Run(ctx, "inspect", "-f",
		`{{.State.Status}} {{.NetworkSettings.IPAddress}} {{index .Config.Labels "`+LabelRehearsal+`"}}`, n.Container)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", s.Name, err)
	}
	f := strings.Fields(out)
	if len(f) != 3 || f[0] != "running" || f[2] != c.Root || net.ParseIP(f[1]) == nil {
		return nil, fmt.Errorf("node %s: container %s is not a running node of ours (%q)", s.Name, n.Container, out)
	}
	if err := n.waitReady(ctx, 10*time.Second); err != nil {
		return nil, err
	}
	n.ip = f[1]
	return n, nil
}

func (n *Node) waitReady(ctx context.Context, timeout time.Duration) error {
	err := poll.Until(ctx, timeout, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if _, err := n.Exec(ctx, supervisor, "ready"); err == nil {
			return true, nil
		}
		state, _ := n.cluster.Engine.Run(ctx, "inspect", "-f", "{{.State.Status}}", n.Container)
		if state != "running" {
			return false, poll.Stop(fmt.Errorf("container %s", state))
		}
		return false, fmt.Errorf("container %s", state)
	})
	if err != nil {
		logs, _ := n.cluster.Engine.Run(context.WithoutCancel(ctx), "logs", "--tail", "30", n.Container)
		return fmt.Errorf("node %s: dockerd not ready: %w; node output:\n%s", n.Name, err, logs)
	}
	return nil
}

// Exec runs a command in the node and returns its combined output.
func (n *Node) Exec(ctx context.Context, cmd ...string) (string, error) {
	return n.cluster.Engine.Run(ctx, append([]string{"exec", n.Container}, cmd...)...)
}

// ExecCmd is the command line that runs cmd in the node with its standard
// input attached, for a process the caller keeps.
func (n *Node) ExecCmd(cmd ...string) execx.Cmd {
	return n.cluster.Engine.Cmd(append([]string{"exec", "-i", n.Container}, cmd...)...)
}

// Engine is the node's inner engine, reached from the host through its
// socket in the run directory.
func (n *Node) Engine() docker.Client { return docker.Client{Socket: n.DockerSocket()} }

// Docker runs the node's own docker client (its inner engine).
func (n *Node) Docker(ctx context.Context, args ...string) (string, error) {
	return n.Exec(ctx, append([]string{"docker"}, args...)...)
}

// AddRoute routes cidr via another node's IP (pod CIDRs of other nodes).
func (n *Node) AddRoute(ctx context.Context, cidr, via string) error {
	if _, err := n.Exec(ctx, "ip", "route", "replace", cidr, "via", via); err != nil {
		return fmt.Errorf("node %s: route %s via %s: %w", n.Name, cidr, via, err)
	}
	return nil
}

// LoadImages loads each ref into the node's engine: a path to a `docker
// save` tarball, or else an image name on the outer engine.
func (n *Node) LoadImages(ctx context.Context, refs ...string) error {
	for _, ref := range refs {
		start := time.Now()
		if st, err := os.Stat(ref); err == nil && st.Mode().IsRegular() {
			f, err := os.Open(ref)
			if err != nil {
				return fmt.Errorf("node %s: load %s: %w", n.Name, ref, err)
			}
			_, err = n.cluster.Engine.RunWith(ctx, f, 10*time.Minute, "exec", "-i", n.Container, "docker", "load")
			f.Close()
			if err != nil {
				return fmt.Errorf("node %s: load %s: %w", n.Name, ref, err)
			}
		} else if err := n.loadFromEngine(ctx, ref); err != nil {
			return err
		}
		klog.V(1).Infof("node %s: loaded %s in %s", n.Name, ref, time.Since(start).Round(10*time.Millisecond))
	}
	return nil
}

// loadFromEngine pipes `docker save REF` on the outer engine into the
// node's `docker load`.
func (n *Node) loadFromEngine(ctx context.Context, ref string) error {
	pr, pw := io.Pipe()
	save, err := execx.Start(ctx, withIO(n.cluster.Engine.Cmd("save", ref), nil, pw, 10*time.Minute))
	if err != nil {
		return fmt.Errorf("node %s: save %s: %w", n.Name, ref, err)
	}
	go func() { pw.CloseWithError(save.Wait()) }()
	_, loadErr := n.cluster.Engine.RunWith(ctx, pr, 10*time.Minute, "exec", "-i", n.Container, "docker", "load")
	pr.Close()
	if err := save.Wait(); err != nil {
		return fmt.Errorf("node %s: save %s: %w", n.Name, ref, err)
	}
	if loadErr != nil {
		return fmt.Errorf("node %s: load %s: %w", n.Name, ref, loadErr)
	}
	return nil
}

func unixNano(t time.Time) string {
	return strconv.FormatInt(t.Unix(), 10) + "." + fmt.Sprintf("%09d", t.Nanosecond())
}

// Remove removes the node's container and volume. Its processes and
// mounts live in the node's namespaces and go with it.
func (n *Node) Remove(ctx context.Context) error {
	e := n.cluster.Engine
	if _, err := e.Run(ctx, "rm", "-f", "-v", n.Container); err != nil && !errors.Is(err, docker.ErrNotFound) {
		return fmt.Errorf("node %s: remove container: %w", n.Name, err)
	}
	if _, err := e.Run(ctx, "volume", "rm", "-f", n.Volume); err != nil {
		return fmt.Errorf("node %s: remove volume: %w", n.Name, err)
	}
	return nil
}

// stage hard-links (or copies) a host file into the stage directory
// every node mounts, under rel, and returns its path in the node. A new
// file replaces the old by rename: a running binary keeps its inode.
func (c *Cluster) stage(src, rel string) (string, error) {
	dst := filepath.Join(c.stageDir(), rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("stage %s: %w", src, err)
	}
	if same(src, dst) {
		return filepath.Join(nodeStageDir, rel), nil
	}
	// A name of its own: nodes are created side by side and stage the
	// same files.
	f, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("stage %s: %w", src, err)
	}
	tmp := f.Name()
	f.Close()
	os.Remove(tmp)
	if err := os.Link(src, tmp); err != nil {
		if err := fsutil.CopyFile(src, tmp); err != nil {
			return "", fmt.Errorf("stage %s: %w", src, err)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", fmt.Errorf("stage %s: %w", src, err)
	}
	return filepath.Join(nodeStageDir, rel), nil
}

func same(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
