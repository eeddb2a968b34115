package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	cfg := KubeletConfig{Release: release, Variant: variant, Binary: bin,
		PauseImage: r.PauseImage, ManifestDir: n.ManifestDir, RootDir: n.RootDir, DockerEndpoint: n.Endpoint, LogDir: n.LogDir,
		DockershimRoot: n.DockershimRoot, RuntimeEndpoint: n.RuntimeEndpoint, CgroupRoot: n.CgroupRoot,
		Shadow: ShadowScript(n.Root), SysctlDir: n.SysctlDir, PodLogDir: n.PodLogDir, KubeletOptions: opts}
	if Minor(release) >= ShimFrom {
		// Leaving dockershim as an operator does: toolchain switch-node
		// moves the flags of the node's kubeadm files (1.23's, as this
		// node's kubelets had them) to the shim's and the new kubelet's.
		shimArgs, kubeletArgs, err := n.switchNode(release)
		if err != nil {
			return nil, err
		}
		shim, err := n.startShim(variant, shimArgs)
		if err != nil {
			return nil, err
		}
		// The shim's sandbox image, the one 1.23 ran the pods with (the
		// kubelet's flag only keeps it from image GC).
		cfg.PauseImage, cfg.RuntimeArgs = shim.Config.PauseImage, kubeletArgs
	} else {
		// 1.23 and older serve their own dockershim on the same socket:
		// the node's files as they were before any switch.
		n.StopShim()
		if cfg.RuntimeArgs, err = n.dockershimFlags(cfg); err != nil {
			return nil, err
		}
	}
	k, err := StartKubelet(cfg)
	if err != nil {
		return nil, err
	}
	n.kubelet = k
	return k, nil
}

// startShim makes sure ShimRelease's dockershim of variant serves the
// node with args (the patched kubelets run on the patched shim, the
// official ones on the vanilla one): a running one of that variant and
// those flags is kept, as a kubelet switch 1.24 <-> 1.25 keeps it.
func (n *Node) startShim(variant string, args []string) (*Kubelet, error) {
	if n.shim != nil {
		if done, _ := n.shim.Exited(); !done && n.shim.Config.Variant == variant && slices.Equal(n.shim.Config.RuntimeArgs, args) {
			return n.shim, nil
		}
		n.StopShim()
	}
	pause := flagValue(args, "--pod-infra-container-image")
	if pause == "" {
		return nil, fmt.Errorf("the shim's flags %q name no --pod-infra-container-image: the sandboxes 1.23 made ran another", args)
	}
	shim, err := StartDockershim(KubeletConfig{Release: ShimRelease, Variant: variant, Binary: ShimBinary(n.Root, variant),
		PauseImage: pause, RootDir: n.RootDir, DockerEndpoint: n.Endpoint, LogDir: n.LogDir,
		DockershimRoot: n.DockershimRoot, RuntimeEndpoint: n.RuntimeEndpoint, RuntimeArgs: args,
		Shadow: ShadowScript(n.Root), SysctlDir: n.SysctlDir, PodLogDir: n.PodLogDir})
	if err != nil {
		return nil, err
	}
	n.shim = shim
	return shim, nil
}

// A kubeadm node's files under Dir/node-root, as switch-node reads and
// writes them: kubeadm's flags (where this node's dockershim flags are),
// the operator's flags file, the kubelet's config file.
const (
	kubeadmFlags  = "/var/lib/kubelet/kubeadm-flags.env"
	extraFlags    = "/etc/default/kubelet"
	kubeletConfig = "/var/lib/kubelet/config.yaml"
	shimFlags     = "/etc/default/dockershim"
	switchBackups = "/var/lib/kubelet-toolchain/dockershim-exit"
)

func (n *Node) nodeFile(p string) string { return filepath.Join(n.Dir, "node-root", p) }

// dockershimFlags are the dockershim flags of a kubelet of 1.23 or older
// on this node, from its kubeadm flags file: the first time written there
// from what the framework gives (DockershimFlags), after a switch to the
// shim put back by switch-node --back (and checked to be those again).
func (n *Node) dockershimFlags(cfg KubeletConfig) ([]string, error) {
	want := DockershimFlags(cfg)
	if _, err := os.Stat(n.nodeFile(switchBackups)); err == nil {
		if _, err := n.toolchain("switch-node", "--back"); err != nil {
			return nil, err
		}
		got, err := readFlags(n.nodeFile(kubeadmFlags), "KUBELET_KUBEADM_ARGS")
		if err != nil {
			return nil, err
		}
		if !slices.Equal(got, want) {
			return nil, fmt.Errorf("switch-node --back restored %s as %q, not the flags before the switch %q", kubeadmFlags, got, want)
		}
		return got, nil
	}
	files := map[string]string{
		kubeadmFlags:  fmt.Sprintf("KUBELET_KUBEADM_ARGS=%q\n", strings.Join(want, " ")),
		extraFlags:    "KUBELET_EXTRA_ARGS=\n",
		kubeletConfig: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: cgroupfs\n",
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(n.nodeFile(p)), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(n.nodeFile(p), []byte(data), 0o644); err != nil {
			return nil, err
		}
	}
	return want, nil
}

// switchNode runs toolchain switch-node --to release --apply on the node's
// files (written first from 1.23.17's flags when no kubelet of 1.23 ran
// here) and returns the flags it wrote for the shim and the kubelet.
func (n *Node) switchNode(release string) (shim, kubelet []string, err error) {
	if _, err := os.Stat(n.nodeFile(kubeadmFlags)); err != nil {
		r, err := LoadRelease(n.Root, ShimRelease)
		if err != nil {
			return nil, nil, err
		}
		if _, err := n.dockershimFlags(KubeletConfig{PauseImage: r.PauseImage, DockerEndpoint: n.Endpoint,
			DockershimRoot: n.DockershimRoot, RuntimeEndpoint: n.RuntimeEndpoint}); err != nil {
			return nil, nil, err
		}
	}
	if _, err := n.toolchain("switch-node", "--to", release, "--apply"); err != nil {
		return nil, nil, err
	}
	if shim, err = readFlags(n.nodeFile(shimFlags), "DOCKERSHIM_ARGS"); err != nil {
		return nil, nil, err
	}
	if kubelet, err = readFlags(n.nodeFile(kubeadmFlags), "KUBELET_KUBEADM_ARGS"); err != nil {
		return nil, nil, err
	}
	extra, err := readFlags(n.nodeFile(extraFlags), "KUBELET_EXTRA_ARGS")
	if err != nil {
		return nil, nil, err
	}
	return shim, append(kubelet, extra...), nil
}

// toolchain runs the repository's CLI on this node's files, its output
// kept in the node's log directory.
func (n *Node) toolchain(args ...string) (string, error) {
	runs.Lock()
	runs.n++
	log := filepath.Join(n.LogDir, fmt.Sprintf("toolchain-%02d-%s.log", runs.n, args[0]))
	runs.Unlock()
	argv := append([]string{"--root", n.Root}, append(args, "--node-root", filepath.Join(n.Dir, "node-root"))...)
	cmd := exec.Command(filepath.Join(n.Root, "_output", "bin", "toolchain"), argv...)
	out, err := cmd.CombinedOutput()
	if werr := os.WriteFile(log, append([]byte("# toolchain "+strings.Join(argv, " ")+"\n"), out...), 0o644); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return string(out), fmt.Errorf("toolchain %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// readFlags reads a flags variable of an environment file as its words.
func readFlags(path, name string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+"="); ok {
			return strings.Fields(strings.Trim(v, `"'`)), nil
		}
	}
	return nil, fmt.Errorf("%s sets no %s", path, name)
}

// flagValue is the value of the last --name=value in args ("" if none).
func flagValue(args []string, name string) string {
	v := ""
	for _, a := range args {
		if val, ok := strings.CutPrefix(a, name+"="); ok {
			v = val
		}
	}
	return v
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
