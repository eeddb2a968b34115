package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Node is the state shared by the kubelets a spec switches between: the
// static pod manifests, the kubelet root dir, dockershim's state, the pod
// cgroups, the engine. Nothing of it is the machine's: a kubelet of the
// node keeps its sandbox checkpoints and serves CRI under Dir, not in
// /var/lib/dockershim and /var/run/dockershim.sock where a production
// kubelet keeps its own, and sees only its own pod cgroups.
type Node struct {
	// Kubelets, when set, are the only releases Start may run: the
	// spec's kubelet labels, so a spec cannot start a kubelet the run did
	// not build for it.
	Kubelets    []string
	Root        string // repository root
	Dir         string // this node's scratch dir
	ManifestDir string
	RootDir     string
	LogDir      string
	// DockershimRoot is --experimental-dockershim-root-directory (all
	// three releases accept it): sandbox checkpoints are under sandbox/.
	DockershimRoot string
	// RuntimeEndpoint is the socket dockershim serves CRI on
	// (--container-runtime-endpoint).
	RuntimeEndpoint string
	// CgroupRoot is --cgroup-root, the node's own (cgroup.go says why).
	CgroupRoot string
	// SysctlDir holds the kubelets' shadows of the kernel settings they
	// write (KubeletConfig.Shadow), starting at the Linux defaults;
	// PodLogDir their /var/log/pods and /var/log/containers.
	SysctlDir, PodLogDir string
	// Docker is the e2e's own engine (EngineSocket), checked to be ours.
	Docker *Docker
	// Endpoint is the Docker socket kubelets talk to (the engine, or a proxy).
	Endpoint string
	// AllowPrivileged passes --allow-privileged=true to kubelets that have
	// the flag (up to 1.14): without it they refuse privileged static pods.
	AllowPrivileged bool
	kubelet         *Kubelet
	// shim is the dockershim a kubelet of 1.24+ runs on (StartDockershim);
	// it outlives the kubelets above it, as on a node.
	shim *Kubelet
}

// NewNode prepares an empty node under dir on the e2e's own engine.
// Nothing may be running yet: a leftover kubelet or container would skew
// every assertion.
func NewNode(ctx context.Context, root, dir, logDir string) (*Node, error) {
	engine := NewDocker(EngineSocket(root))
	n := &Node{Root: root, Dir: dir, ManifestDir: filepath.Join(dir, "manifests"), RootDir: filepath.Join(dir, "kubelet"),
		LogDir: logDir, DockershimRoot: filepath.Join(dir, "dockershim"), RuntimeEndpoint: filepath.Join(dir, "dockershim.sock"),
		CgroupRoot: "/kubelet-" + filepath.Base(dir), SysctlDir: filepath.Join(dir, "sysctls"), PodLogDir: filepath.Join(dir, "var-log"), Docker: engine, Endpoint: engine.Socket}
	if err := engine.CheckOurs(ctx, root); err != nil {
		if errors.Is(err, ErrNotOurEngine) {
			return nil, err
		}
		return nil, fmt.Errorf("the e2e's Docker Engine is not reachable (make e2e starts it: tools/engine-up.sh): %w", err)
	}
	left, err := n.Docker.KubeContainers(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range left {
		// A previous run that was killed outright may have left these.
		n.Docker.RemoveContainer(ctx, c.ID)
	}
	for _, d := range []string{n.ManifestDir, n.RootDir, n.DockershimRoot, logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := CreateCgroupRoot(n.CgroupRoot); err != nil {
		return nil, err
	}
	return n, nil
}

// Checkpoint is the path of dockershim's checkpoint of a sandbox.
func (n *Node) Checkpoint(sandboxID string) string {
	return filepath.Join(n.DockershimRoot, "sandbox", sandboxID)
}

// Start starts a kubelet of release+variant on this node, stopping the
// current one first.
func (n *Node) Start(release, variant string) (*Kubelet, error) {
	return n.StartWith(release, variant, KubeletOptions{})
}

// StartWith is Start with extra flags or environment.
func (n *Node) StartWith(release, variant string, opts KubeletOptions) (*Kubelet, error) {
	if n.Kubelets != nil && !slices.Contains(n.Kubelets, release) {
		return nil, fmt.Errorf("kubelet %s: the spec is not labelled kubelet:%s (it may start only %v; e2e/run.sh builds only the kubelets the selected specs are labelled with)", release, release, n.Kubelets)
	}
	n.StopKubelet()
	r, err := LoadRelease(n.Root, release)
	if err != nil {
		return nil, err
	}
	if n.AllowPrivileged && Minor(release) <= 14 {
		opts.Args = append([]string{"--allow-privileged=true"}, opts.Args...)
	}
	bin := opts.Binary
	if bin == "" {
		bin = KubeletBinary(n.Root, release, variant)
	}
	pause := r.PauseImage
	if Minor(release) >= ShimFrom {
		// The shim's sandbox image, the one 1.23 ran the pods with (the
		// kubelet's flag only keeps it from image GC).
		shim, err := n.startShim(variant)
		if err != nil {
			return nil, err
		}
		pause = shim.Config.PauseImage
	} else {
		// 1.23 and older serve their own dockershim on the same socket.
		n.StopShim()
	}
	k, err := StartKubelet(KubeletConfig{Release: release, Variant: variant, Binary: bin,
		PauseImage: pause, ManifestDir: n.ManifestDir, RootDir: n.RootDir, DockerEndpoint: n.Endpoint, LogDir: n.LogDir,
		DockershimRoot: n.DockershimRoot, RuntimeEndpoint: n.RuntimeEndpoint, CgroupRoot: n.CgroupRoot,
		Shadow: ShadowScript(n.Root), SysctlDir: n.SysctlDir, PodLogDir: n.PodLogDir, KubeletOptions: opts})
	if err != nil {
		return nil, err
	}
	n.kubelet = k
	return k, nil
}

// startShim makes sure ShimRelease's dockershim of variant serves the
// node (the patched kubelets run on the patched shim, the official ones
// on the vanilla one): a running one of that variant is kept, as a
// kubelet switch 1.24 <-> 1.25 keeps it.
func (n *Node) startShim(variant string) (*Kubelet, error) {
	if n.shim != nil {
		if done, _ := n.shim.Exited(); !done && n.shim.Config.Variant == variant {
			return n.shim, nil
		}
		n.StopShim()
	}
	r, err := LoadRelease(n.Root, ShimRelease)
	if err != nil {
		return nil, err
	}
	shim, err := StartDockershim(KubeletConfig{Release: ShimRelease, Variant: variant, Binary: ShimBinary(n.Root, variant),
		PauseImage: r.PauseImage, RootDir: n.RootDir, DockerEndpoint: n.Endpoint, LogDir: n.LogDir,
		DockershimRoot: n.DockershimRoot, RuntimeEndpoint: n.RuntimeEndpoint,
		Shadow: ShadowScript(n.Root), SysctlDir: n.SysctlDir, PodLogDir: n.PodLogDir})
	if err != nil {
		return nil, err
	}
	n.shim = shim
	return shim, nil
}

// Shim is the running dockershim, if any.
func (n *Node) Shim() *Kubelet { return n.shim }

// StopShim stops the dockershim; the containers keep running.
func (n *Node) StopShim() {
	if n.shim != nil {
		n.shim.Stop()
		n.shim = nil
	}
}

// Kubelet is the current kubelet, if any.
func (n *Node) Kubelet() *Kubelet { return n.kubelet }

// StopKubelet stops the current kubelet; its containers keep running.
func (n *Node) StopKubelet() {
	if n.kubelet != nil {
		n.kubelet.Stop()
		n.kubelet = nil
	}
}

// AddPod writes a static pod manifest.
func (n *Node) AddPod(p Pod) error {
	data, err := json.MarshalIndent(p.Manifest(), "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(n.ManifestDir, "."+p.Name+".json.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	// Rename, so the kubelet never reads half a manifest.
	return os.Rename(tmp, filepath.Join(n.ManifestDir, p.Name+".json"))
}

// RemovePod deletes a static pod manifest.
func (n *Node) RemovePod(name string) error {
	return os.Remove(filepath.Join(n.ManifestDir, name+".json"))
}

// Containers maps pod/container keys to the node's kubelet-made containers.
func (n *Node) Containers(ctx context.Context) (map[string]Container, error) {
	list, err := n.Docker.KubeContainers(ctx)
	if err != nil {
		return nil, err
	}
	return newestByKey(list), nil
}

// newestByKey keeps each key's newest container, as the kubelet takes a
// pod's newest sandbox for its current one. Creation times are compared
// to the nanosecond: a sandbox that failed to start (a host port still
// held by the pod it replaces) and the next attempt are often created
// within one second.
func newestByKey(list []Container) map[string]Container {
	out := map[string]Container{}
	for _, c := range list {
		key := c.Key()
		if old, dup := out[key]; dup && !c.Created.After(old.Created) {
			continue
		}
		out[key] = c
	}
	return out
}

// Cleanup stops the kubelet and its shim and removes every container, checkpoint,
// cgroup, log, mount and file the node made (the containers from the e2e's
// own engine; checkpoints and pod logs are under Dir). It reports every
// failure, not just the first.
func (n *Node) Cleanup(ctx context.Context) error {
	n.StopKubelet()
	n.StopShim()
	var errs []error
	list, err := n.Docker.KubeContainers(ctx)
	errs = append(errs, err)
	for _, c := range list {
		// A container the stopped kubelet's GC asked dockerd to remove just
		// before it stopped may be gone by now: that is what cleanup wants.
		if err := n.Docker.RemoveContainer(ctx, c.ID); !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, RemoveCgroupRoot(n.CgroupRoot))
	errs = append(errs, UnmountUnder(n.Dir))
	if err := os.RemoveAll(n.Dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Describe renders the node's containers for failure messages.
func (n *Node) Describe(ctx context.Context) string {
	list, err := n.Docker.KubeContainers(ctx)
	if err != nil {
		return "docker ps failed: " + err.Error()
	}
	var b strings.Builder
	b.WriteString("--- containers ---\n")
	for _, c := range list {
		fmt.Fprintf(&b, "  %s %-40s %-8s restart=%s created=%s\n", short(c.ID), c.Key(), c.State, c.Labels[LabelRestartCount],
			c.Created.Format("15:04:05.000"))
	}
	if n.kubelet != nil {
		b.WriteString(n.kubelet.LogTail(30))
	}
	return b.String()
}
