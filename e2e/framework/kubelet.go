package framework

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// NodeName is the kubelets' --hostname-override. Static pods are named
// <manifest name>-<node name>; PodName strips the suffix again.
const NodeName = "e2e-node"

// PodName returns the manifest name of a static pod's full name.
func PodName(full string) string { return strings.TrimSuffix(full, "-"+NodeName) }

// ReadOnlyPort is the kubelet's unauthenticated port, closed here
// (--read-only-port=0); the ports the kubelets serve are the slot's
// (SlotPorts).
const ReadOnlyPort = 10255

// KubeletConfig says which kubelet to run and against which node state.
type KubeletConfig struct {
	Release, Variant string
	Binary           string
	PauseImage       string
	// ManifestDir holds the static pods; RootDir is --root-dir. Both outlive
	// one kubelet: switching kubelets keeps them.
	ManifestDir, RootDir string
	// DockerEndpoint is the socket both dockershim and cadvisor use.
	DockerEndpoint string
	// DockershimRoot and RuntimeEndpoint, when set, keep dockershim's
	// checkpoints and CRI socket off the machine's defaults
	// (/var/lib/dockershim, /var/run/dockershim.sock: a kubelet unlinks
	// the socket at start).
	DockershimRoot, RuntimeEndpoint string
	// CgroupRoot, when set, is --cgroup-root (it must exist: CreateCgroupRoot).
	CgroupRoot string
	// LogDir receives kubelet-<release>-<variant>-<n>.log.
	LogDir string
	// Verbosity is --v (4 logs each periodic pod sync).
	Verbosity int
	// Port is --port, the TLS port, and HealthzPort --healthz-port
	// (default: the slot's, SlotPorts).
	Port, HealthzPort int
	// CertDir is --cert-dir, where the kubelet keeps its self-signed serving
	// cert (default RootDir/pki: never the machine's /var/lib/kubelet/pki).
	CertDir string
	// Shadow is scripts/node/shadow-sysctls.sh: the kubelet runs in a mount
	// namespace of its own where the kernel settings it writes at start
	// (vm.overcommit_memory, kernel.panic, ...) are files under SysctlDir,
	// never the machine's, and /var/log/pods and /var/log/containers are
	// PodLogDir's pods/ and containers/. Both outlive one kubelet, as
	// RootDir does.
	Shadow, SysctlDir, PodLogDir string
	// RuntimeArgs, when set, replace the runtime flags the framework
	// would give (DockershimFlags; from 1.24 the remote runtime's, and the
	// shim's own): the flags of the node's kubeadm files, as toolchain
	// switch-node wrote them (Node.StartWith). They must still name the
	// node's own socket and checkpoints.
	RuntimeArgs []string
	KubeletOptions
}

// KubeletOptions are what a spec adds to the framework's kubelet command.
type KubeletOptions struct {
	// Args are appended to the command line (later flags win).
	Args []string
	// Env is appended to the kubelet's environment, e.g. GODEBUG=....
	Env []string
	// Binary, when set, is run instead of the release's built kubelet (a
	// packager's own rebuild).
	Binary string
}

// Kubelet is one running kubelet process.
type Kubelet struct {
	Config  KubeletConfig
	LogPath string
	exited  chan struct{}
	exitErr error

	mu       sync.Mutex
	cmd      *exec.Cmd
	started  time.Time
	stopping bool
	restarts int
}

var runs struct {
	sync.Mutex
	n int
}

// nextLog is the log of the next process the framework starts,
// <what>-<n>-<release>-<variant>.log in cfg.LogDir: numbered in start
// order across kubelets and shims.
func nextLog(cfg KubeletConfig, what string) string {
	runs.Lock()
	runs.n++
	n := runs.n
	runs.Unlock()
	return filepath.Join(cfg.LogDir, fmt.Sprintf("%s-%02d-%s-%s.log", what, n, cfg.Release, cfg.Variant))
}

// StartKubelet starts a kubelet in standalone mode. The process is killed
// if the test process dies (Pdeathsig); callers register Stop with
// DeferCleanup right away.
func StartKubelet(cfg KubeletConfig) (*Kubelet, error) {
	if _, err := os.Stat(cfg.Binary); err != nil {
		return nil, fmt.Errorf("kubelet %s %s not built (make kubelet VERSION=%s VARIANT=%s): %w", cfg.Release, cfg.Variant, cfg.Release, cfg.Variant, err)
	}
	if cfg.Shadow == "" || cfg.SysctlDir == "" || cfg.PodLogDir == "" {
		return nil, fmt.Errorf("kubelet %s %s: no sysctl or log shadow: it would write the machine's kernel settings and pod logs", cfg.Release, cfg.Variant)
	}
	for _, d := range []string{cfg.ManifestDir, cfg.RootDir, cfg.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	logPath := nextLog(cfg, "kubelet")
	v := cfg.Verbosity
	if v == 0 {
		v = 4
		if strings.HasPrefix(cfg.Release, "1.21.") || strings.HasPrefix(cfg.Release, "1.22.") {
			// 1.21 and 1.22 log a standalone pod's status (PodReady) at
			// --v=5 only; 1.23 went back to 3.
			v = 5
		}
	}
	if cfg.Port == 0 {
		cfg.Port = SlotPorts().Kubelet
	}
	if cfg.HealthzPort == 0 {
		cfg.HealthzPort = SlotPorts().Healthz
	}
	if cfg.CertDir == "" {
		cfg.CertDir = filepath.Join(cfg.RootDir, "pki")
	}
	clientCA, err := writeClientCA(cfg.CertDir)
	if err != nil {
		return nil, err
	}
	endpoint := "unix://" + cfg.DockerEndpoint
	args := []string{
		"--pod-manifest-path=" + cfg.ManifestDir,
		"--root-dir=" + cfg.RootDir,
		"--cgroup-driver=cgroupfs",
		"--hostname-override=" + NodeName,
		"--address=127.0.0.1",
		fmt.Sprintf("--port=%d", cfg.Port),
		"--cert-dir=" + cfg.CertDir,
		// Privileged pods run here: nobody may reach them through the
		// kubelet's API unauthenticated. Anonymous requests are refused
		// (401: only certificates of a CA whose key is thrown away are
		// accepted), and the unauthenticated read-only port is closed.
		"--anonymous-auth=false", "--client-ca-file=" + clientCA,
		"--read-only-port=0",
		fmt.Sprintf("--healthz-port=%d", cfg.HealthzPort),
		"--sync-frequency=" + SyncFrequency.String(),
		"--file-check-frequency=" + FileCheckFrequency.String(),
		fmt.Sprintf("--v=%d", v),
	}
	runtime := cfg.RuntimeArgs
	if Minor(cfg.Release) >= ShimFrom {
		// No dockershim inside, nor its flags (unknown flags are fatal):
		// the runtime is the shim (StartDockershim) at RuntimeEndpoint,
		// which 1.24 no longer defaults.
		if cfg.RuntimeEndpoint == "" {
			return nil, fmt.Errorf("kubelet %s %s: no --container-runtime-endpoint (the dockershim it runs on)", cfg.Release, cfg.Variant)
		}
		if runtime == nil {
			// The pause image only keeps it from image GC here: the shim's
			// decides the sandboxes'.
			runtime = []string{"--container-runtime=remote", "--container-runtime-endpoint=unix://" + cfg.RuntimeEndpoint, "--pod-infra-container-image=" + cfg.PauseImage}
		}
		if err := ownRuntime(runtime, "--container-runtime-endpoint=unix://"+cfg.RuntimeEndpoint); err != nil {
			return nil, fmt.Errorf("kubelet %s %s: %w", cfg.Release, cfg.Variant, err)
		}
	} else {
		if runtime == nil {
			runtime = DockershimFlags(cfg)
		}
		if cfg.RuntimeArgs != nil {
			if err := ownRuntime(runtime, "--container-runtime-endpoint=unix://"+cfg.RuntimeEndpoint, "--experimental-dockershim-root-directory="+cfg.DockershimRoot); err != nil {
				return nil, fmt.Errorf("kubelet %s %s: %w", cfg.Release, cfg.Variant, err)
			}
		}
		// cAdvisor's Docker factory (gone in 1.24): the same engine.
		args = append(args, "--docker="+endpoint)
	}
	args = append(args, runtime...)
	if cfg.CgroupRoot != "" {
		args = append(args, "--cgroup-root="+cfg.CgroupRoot)
	}
	// 1.10+ (DevicePlugins beta, on) empties /var/lib/kubelet/device-plugins/
	// at start, a path no flag moves: every device plugin socket of a
	// production kubelet, which then re-register with this one. 1.9 has the
	// gate off; 1.7 does not know it (an unknown gate is an error).
	if Minor(cfg.Release) >= 10 {
		args = append(args, "--feature-gates=DevicePlugins=false")
	}
	// cAdvisor's own web UI and API (4194 on every address, no
	// authentication) until 1.12 removed the flag.
	if Minor(cfg.Release) < 12 {
		args = append(args, "--cadvisor-port=0")
	}
	// The kubelets share the machine's disk with everything else on it: the
	// default disk thresholds (nodefs.available<10%, and imagefs.available
	// <15% from 1.10) would refuse every pod on a machine whose disk is
	// merely fuller than that, whatever the test, and image GC (from 85%
	// used) would delete the engine's images that the next spec runs
	// (measured: a 1.12 kubelet on a disk 85.4% full removed every unused
	// one). Memory stays guarded.
	args = append(args, "--eviction-hard=memory.available<100Mi", "--image-gc-high-threshold=100", "--image-gc-low-threshold=99")
	args = append(args, cfg.Args...)
	return startDaemon(cfg, logPath, args)
}

// ShimFrom is the first minor whose kubelet has no dockershim inside: it
// runs on 1.23.17's, served on its own (StartDockershim).
const ShimFrom = 24

// ShimRelease is the release whose dockershim the kubelets of 1.24+ run
// on (versions.yaml series.shim; make dockershim).
const ShimRelease = "1.23.17"

// StartDockershim starts ShimRelease's dockershim of cfg.Variant on its
// own, as an operator leaving dockershim runs it for a kubelet of 1.24 or
// 1.25: the node's Docker endpoint, checkpoints (DockershimRoot) and CRI
// socket (RuntimeEndpoint), the pod infra image and cgroup driver the
// kubelets of 1.23 had, under the same shadow (it writes the network
// plugin's kernel settings and the containers' log links under
// /var/log/pods). cfg.Args are the shim's own flags (a network plugin).
// It is a process like a kubelet: Stop, Log and Exited as the kubelet's.
func StartDockershim(cfg KubeletConfig) (*Kubelet, error) {
	if _, err := os.Stat(cfg.Binary); err != nil {
		return nil, fmt.Errorf("dockershim %s %s not built (make dockershim VERSION=%s VARIANT=%s): %w", cfg.Release, cfg.Variant, cfg.Release, cfg.Variant, err)
	}
	if cfg.Shadow == "" || cfg.SysctlDir == "" || cfg.PodLogDir == "" || cfg.DockershimRoot == "" || cfg.RuntimeEndpoint == "" {
		return nil, fmt.Errorf("dockershim %s %s: no sysctl or log shadow, root directory or endpoint of its own: it would use the machine's", cfg.Release, cfg.Variant)
	}
	logPath := nextLog(cfg, "dockershim")
	runtime := cfg.RuntimeArgs
	if runtime == nil {
		runtime = append(DockershimFlags(cfg), "--cgroup-driver=cgroupfs")
	}
	if err := ownRuntime(runtime, "--container-runtime-endpoint=unix://"+cfg.RuntimeEndpoint, "--experimental-dockershim-root-directory="+cfg.DockershimRoot); err != nil {
		return nil, fmt.Errorf("dockershim %s %s: %w", cfg.Release, cfg.Variant, err)
	}
	args := append(append(runtime, "--v=4"), cfg.Args...)
	k, err := startDaemon(cfg, logPath, args)
	if err != nil {
		return nil, err
	}
	// The kubelet dials the socket once at start: wait until it is served.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if done, err := k.Exited(); done {
			return nil, fmt.Errorf("dockershim exited: %v\n%s", err, k.LogTail(20))
		}
		if strings.Contains(k.Log(), "Serving CRI v1alpha2") {
			return k, nil
		}
		if time.Now().After(deadline) {
			k.Stop()
			return nil, fmt.Errorf("dockershim did not serve %s within 30s:\n%s", cfg.RuntimeEndpoint, k.LogTail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DockershimFlags are the flags a kubelet of 1.23 or older gives its
// dockershim here (and the shim served on its own takes): the node's
// engine, its checkpoints and CRI socket (never the machine's
// /var/lib/dockershim and /var/run/dockershim.sock), the sandbox image.
func DockershimFlags(cfg KubeletConfig) []string {
	flags := []string{"--docker-endpoint=unix://" + cfg.DockerEndpoint}
	if cfg.DockershimRoot != "" {
		flags = append(flags, "--experimental-dockershim-root-directory="+cfg.DockershimRoot)
	}
	if cfg.RuntimeEndpoint != "" {
		flags = append(flags, "--container-runtime-endpoint=unix://"+cfg.RuntimeEndpoint)
	}
	return append(flags, "--pod-infra-container-image="+cfg.PauseImage)
}

// ownRuntime fails unless runtime flags name the node's own socket and
// checkpoints (want): flags read from files a tool wrote must not send a
// daemon to the machine's defaults.
func ownRuntime(runtime []string, want ...string) error {
	for _, w := range want {
		if !slices.Contains(runtime, w) {
			return fmt.Errorf("its runtime flags %q lack %s: it would use the machine's", runtime, w)
		}
	}
	return nil
}

// startDaemon runs cfg.Binary with args under the shadow (a kubelet, or
// the dockershim it runs on), logging to logPath, killed with the test
// process. A kubelet dead in cAdvisor's start-up walk is started again
// (cadvisorStartRace).
func startDaemon(cfg KubeletConfig, logPath string, args []string) (*Kubelet, error) {
	k := &Kubelet{Config: cfg, LogPath: logPath, exited: make(chan struct{})}
	argv := append([]string{"exec", cfg.SysctlDir, cfg.RootDir, cfg.PodLogDir, "--", cfg.Binary}, args...)
	start := func(header string) (*exec.Cmd, *os.File, error) {
		logFile, err := os.Create(logPath)
		if err != nil {
			return nil, nil, err
		}
		cmd := exec.Command(cfg.Shadow, argv...)
		cmd.Env = append(os.Environ(), cfg.Env...)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		fmt.Fprintf(logFile, "%s# %s %s\n", header, strings.Join(cfg.Env, " "), strings.Join(cmd.Args, " "))
		if err := cmd.Start(); err != nil {
			logFile.Close()
			return nil, nil, err
		}
		k.cmd, k.started = cmd, time.Now()
		return cmd, logFile, nil
	}
	cmd, logFile, err := start("")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			err := cmd.Wait()
			logFile.Close()
			k.mu.Lock()
			if !k.stopping && k.restarts < maxRaceRestarts && cadvisorStartRace(k.Log()) {
				k.restarts++
				kept := fmt.Sprintf("%s.cadvisor-race-%d", logPath, k.restarts)
				os.Rename(logPath, kept)
				var serr error
				cmd, logFile, serr = start(fmt.Sprintf("# restarted: the previous kubelet died in cAdvisor's start-up walk (%s)\n", kept))
				if serr == nil {
					k.mu.Unlock()
					continue
				}
				err = serr
			}
			k.exitErr = err
			k.mu.Unlock()
			close(k.exited)
			return
		}
	}()
	return k, nil
}

// maxRaceRestarts bounds the restarts after cadvisorStartRace.
const maxRaceRestarts = 2

// cadvisorStartRace reports the kubelet died as 1.7's cAdvisor does when
// a cgroup it is walking at start is removed meanwhile ("Failed to start
// cAdvisor readdirent ...: no such file or directory": its directory walk
// does not ignore ENOENT). Side by side, another node's pods and cleanup
// remove cgroups all the time (every kubelet's cAdvisor walks the whole
// hierarchy). A production kubelet's supervisor (systemd's
// Restart=always) starts it again; so does the framework, at most
// maxRaceRestarts times, keeping the dead one's log beside the new one's.
func cadvisorStartRace(log string) bool {
	return strings.Contains(log, "Failed to start cAdvisor") && strings.Contains(log, "no such file or directory")
}

// Minor returns the minor version of a release ("1.18.6" -> 18), 0 if
// there is none.
func Minor(release string) int {
	parts := strings.Split(release, ".")
	if len(parts) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(parts[1])
	return n
}

// Started is when the process was started (restarted, after
// cadvisorStartRace).
func (k *Kubelet) Started() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.started
}

// Restarts counts the restarts after cadvisorStartRace.
func (k *Kubelet) Restarts() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.restarts
}

// Exited reports whether the process has exited, and how.
func (k *Kubelet) Exited() (bool, error) {
	select {
	case <-k.exited:
		return true, k.exitErr
	default:
		return false, nil
	}
}

// Stop sends SIGTERM, waits StopTimeout, then SIGKILLs. Kubelet leaves the
// containers running, as it does in production.
func (k *Kubelet) Stop() {
	if done, _ := k.Exited(); done {
		return
	}
	k.mu.Lock()
	k.stopping = true
	pid := k.cmd.Process.Pid
	k.mu.Unlock()
	syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-k.exited:
	case <-time.After(StopTimeout):
		syscall.Kill(-pid, syscall.SIGKILL)
		<-k.exited
	}
}

// Log returns the kubelet's log so far.
func (k *Kubelet) Log() string {
	data, _ := os.ReadFile(k.LogPath)
	return string(data)
}

// LogTail returns the last n lines of the log, for failure messages.
func (k *Kubelet) LogTail(n int) string { return TailFile(k.LogPath, n) }

// TailFile returns the last n lines of a file headed by its path, or why
// it cannot be read, for failure messages.
func TailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return fmt.Sprintf("--- last %d lines of %s ---\n%s", len(lines), path, strings.Join(lines, "\n"))
}

// CountLog counts log lines containing s.
func (k *Kubelet) CountLog(s string) int {
	return strings.Count(k.Log(), s)
}

// PodSyncs counts the periodic syncs the kubelet logged per pod (at --v=4
// every release logs them: "SyncLoop (SYNC): <n> pods; <name>_<ns>(<uid>),
// ..." up to 1.20, `"SyncLoop (SYNC) pods" total=<n> pods=[<ns>/<name> ...]`
// from 1.21). Keys are the pod names as the manifests give them.
func (k *Kubelet) PodSyncs() map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(k.Log(), "\n") {
		if _, pods, ok := strings.Cut(line, "SyncLoop (SYNC): "); ok {
			_, pods, _ = strings.Cut(pods, "; ")
			for _, p := range strings.Split(pods, ", ") {
				if name, _, ok := strings.Cut(p, "_"); ok {
					out[PodName(name)]++
				}
			}
			continue
		}
		if _, pods, ok := strings.Cut(line, `"SyncLoop (SYNC) pods" total=`); ok {
			_, pods, _ = strings.Cut(pods, "pods=[")
			pods, _, _ = strings.Cut(pods, "]")
			for _, p := range strings.Fields(pods) {
				if _, name, ok := strings.Cut(p, "/"); ok {
					out[PodName(name)]++
				}
			}
		}
	}
	return out
}

// PodReady reports, per pod name, whether the pod's Ready condition was
// true in the last status the kubelet logged for it. Standalone kubelets
// have no API server to post status to; at --v=3 and up they log the status
// they computed at every sync ("Ignoring same status for pod ...").
func (k *Kubelet) PodReady() map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(k.Log(), "\n") {
		var name, status string
		if _, rest, ok := strings.Cut(line, "status for pod \""); ok {
			full, s, ok := strings.Cut(rest, "\", status: ")
			if !ok {
				continue
			}
			name, _, _ = strings.Cut(full, "_")
			status = s
		} else if _, rest, ok := strings.Cut(line, `"Ignoring same status for pod" pod="`); ok {
			// From 1.21: pod="<ns>/<name>" status={...}.
			full, s, ok := strings.Cut(rest, `" status=`)
			if !ok {
				continue
			}
			_, name, _ = strings.Cut(full, "/")
			status = s
		} else {
			continue
		}
		out[PodName(name)] = strings.Contains(status, "{Type:Ready Status:True ")
	}
	return out
}

// glogTime reads the timestamp of a glog/klog line ("I1122 01:24:27.029146 ...").
var glogTime = regexp.MustCompile(`^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})`)

// LogTimes returns when each line containing s was logged.
func (k *Kubelet) LogTimes(s string) []time.Time {
	var out []time.Time
	sc := bufio.NewScanner(strings.NewReader(k.Log()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	year := k.Started().Year()
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, s) {
			continue
		}
		if m := glogTime.FindStringSubmatch(line); m != nil {
			if t, err := time.ParseInLocation("0102 15:04:05.000000", m[1], time.Local); err == nil {
				out = append(out, t.AddDate(year, 0, 0))
			}
		}
	}
	return out
}

// Healthy reports whether /healthz answers ok.
func (k *Kubelet) Healthy(ctx context.Context) bool {
	body, err := get(ctx, fmt.Sprintf("http://127.0.0.1:%d/healthz", k.Config.HealthzPort))
	return err == nil && strings.TrimSpace(body) == "ok"
}

func get(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(body), err
}

// UnmountUnder unmounts every mount at or below dir, deepest first
// (kubelet bind-mounts its root dir and mounts pod volumes under it).
func UnmountUnder(dir string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var mounts []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			mounts = append(mounts, f[4])
		}
	}
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	var errs []error
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}
