package framework

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/execx"
)

// EngineSocketEnv names the variable pointing the suites at the e2e's own
// Docker Engine (e2e/run.sh sets it).
const EngineSocketEnv = "E2E_DOCKER_SOCKET"

// EngineLabel is the daemon label tools/engine-up.sh gives its engine,
// valued with the repository root.
const EngineLabel = "io.kubelet-toolchain.e2e-engine"

// ErrNotOurEngine is returned for an engine tools/engine-up.sh did not
// start: on a dockershim node the machine's engine runs production pods,
// and the suites remove every kubelet-made container they see.
var ErrNotOurEngine = errors.New("not the e2e's own Docker Engine")

// EnginesEnv names the directory of the engines e2e/run.sh brings up for
// parallel Ginkgo processes: one per slot, <dir>/<slot>/docker.sock.
const EnginesEnv = "E2E_ENGINES"

// EngineSocket is the socket of the e2e's own engine for this process:
// its slot's under $E2E_ENGINES, else $E2E_DOCKER_SOCKET, else
// _output/engine/docker.sock under the repository root. Never the
// machine's default socket.
func EngineSocket(root string) string {
	if d := os.Getenv(EnginesEnv); d != "" {
		return filepath.Join(d, strconv.Itoa(Slot()), "docker.sock")
	}
	if s := os.Getenv(EngineSocketEnv); s != "" {
		return s
	}
	return filepath.Join(root, "_output", "engine", "docker.sock")
}

// EngineLog is the log of the dockerd at EngineSocket (tools/engine-up.sh
// keeps it beside the socket).
func EngineLog(root string) string {
	return filepath.Join(filepath.Dir(EngineSocket(root)), "dockerd.log")
}

// Docker is what the suites observe and clean up with, through the
// toolchain's one way to reach an engine (tools/docker: the docker CLI on
// a socket).
type Docker struct {
	Socket string
	cli    docker.Client
}

// NewDocker talks to the engine at socket.
func NewDocker(socket string) *Docker {
	return &Docker{Socket: socket, cli: docker.Client{Socket: socket}}
}

// CheckOurs fails with ErrNotOurEngine unless the engine carries
// EngineLabel valued with root: a check made before anything is listed or
// removed, so a wrong socket costs a failed suite, not a node's pods.
func (d *Docker) CheckOurs(ctx context.Context, root string) error {
	var info struct {
		Labels        []string `json:"Labels"`
		DockerRootDir string   `json:"DockerRootDir"`
	}
	out, err := d.cli.Run(ctx, "info", "--format", "{{json .}}")
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return fmt.Errorf("docker info on %s: %w", d.Socket, err)
	}
	for _, l := range info.Labels {
		if k, v, ok := strings.Cut(l, "="); ok && k == EngineLabel && sameDir(v, root) {
			return nil
		}
	}
	return fmt.Errorf("%w: the engine at %s has no label %s=%s (labels %q, data root %s); tools/engine-up.sh starts ours",
		ErrNotOurEngine, d.Socket, EngineLabel, root, info.Labels, info.DockerRootDir)
}

// sameDir compares two paths after resolving symlinks.
func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// ErrNotFound is what a call about a container the engine does not have
// fails with.
var ErrNotFound = docker.ErrNotFound

// Container is one entry of the container list.
type Container struct {
	ID      string            `json:"Id"`
	Names   []string          `json:"Names"`
	Image   string            `json:"Image"`
	State   string            `json:"State"`
	Created time.Time         `json:"Created"` // to the nanosecond: a pod's attempts can fall in one second
	Labels  map[string]string `json:"Labels"`
}

// Kubernetes labels dockershim puts on containers. The kubelet's CRI
// annotations (hash, restart count) are kept as labels prefixed
// "annotation.".
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"
	LabelDockerType    = "io.kubernetes.docker.type" // "podsandbox" or "container"
	LabelRestartCount  = "annotation.io.kubernetes.container.restartCount"
	LabelHash          = "annotation.io.kubernetes.container.hash"
)

// LabelNativeHash is where a patched kubelet of minor line (e.g. "1.9")
// records its own-schema hash, next to the 1.7 hash it writes under
// LabelHash; the line is in the name, so no release reads another's as
// its own.
func LabelNativeHash(minor string) string { return LabelHash + ".v" + minor }

// Key names a container for humans and maps: pod/container, or pod/POD for
// a sandbox.
func (c Container) Key() string {
	name := c.Labels[LabelContainerName]
	if c.Labels[LabelDockerType] == "podsandbox" {
		name = "POD"
	}
	return PodName(c.Labels[LabelPodName]) + "/" + name
}

// KubeContainers lists every container (running or not) kubelet created.
// The list and the inspect are two calls: a container the kubelet removes
// in between makes the inspect fail, and the list is read again.
func (d *Docker) KubeContainers(ctx context.Context) ([]Container, error) {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var ids []string
		if ids, err = d.cli.Lines(ctx, "ps", "-aq", "--no-trunc", "--filter", "label="+LabelDockerType); err != nil || len(ids) == 0 {
			return nil, err
		}
		var inspected []struct {
			ID      string `json:"Id"`
			Name    string `json:"Name"`
			Created time.Time
			Config  struct {
				Image  string            `json:"Image"`
				Labels map[string]string `json:"Labels"`
			} `json:"Config"`
			State struct {
				Status string `json:"Status"`
			} `json:"State"`
		}
		if err = d.cli.Inspect(ctx, &inspected, ids...); errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		out := make([]Container, 0, len(inspected))
		for _, c := range inspected {
			out = append(out, Container{ID: c.ID, Names: []string{c.Name}, Image: c.Config.Image, State: c.State.Status,
				Created: c.Created, Labels: c.Config.Labels})
		}
		return out, nil
	}
	return nil, err
}

// Inspect returns the parts of `docker inspect` the suites look at.
type Inspect struct {
	ID    string `json:"Id"`
	State struct {
		Running   bool   `json:"Running"`
		StartedAt string `json:"StartedAt"`
	} `json:"State"`
	Config struct {
		Labels map[string]string `json:"Labels"`
	} `json:"Config"`
	HostConfig struct {
		// SecurityOpt holds "no-new-privileges" when the kubelet asked
		// for it (allowPrivilegeEscalation: false).
		SecurityOpt []string `json:"SecurityOpt"`
		Privileged  bool     `json:"Privileged"`
	} `json:"HostConfig"`
}

// InspectContainer inspects one container.
func (d *Docker) InspectContainer(ctx context.Context, id string) (*Inspect, error) {
	var out []Inspect
	if err := d.cli.Inspect(ctx, &out, id); err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return nil, fmt.Errorf("docker inspect %s: %d results", id, len(out))
	}
	return &out[0], nil
}

// InspectRaw returns `docker inspect` of a container as the engine gives it,
// for failure reports.
func (d *Docker) InspectRaw(ctx context.Context, id string) (string, error) {
	return d.cli.Run(ctx, "inspect", "--type", "container", id)
}

// Kill sends SIGKILL to a container's main process, as a crash would.
func (d *Docker) Kill(ctx context.Context, id string) error {
	_, err := d.cli.Run(ctx, "kill", "--signal", "KILL", id)
	return err
}

// RemoveContainer force-removes a container and its anonymous volumes.
func (d *Docker) RemoveContainer(ctx context.Context, id string) error {
	_, err := d.cli.Run(ctx, "rm", "--force", "--volumes", id)
	return err
}

// ReadFile reads a file out of a container's filesystem (its writable
// layer included) as `docker cp` archives it: no exec needed.
func (d *Docker) ReadFile(ctx context.Context, id, path string) (string, error) {
	var buf bytes.Buffer
	c := d.cli.Cmd("cp", id+":"+path, "-")
	c.Stdout, c.Timeout = &buf, time.Minute
	if _, err := execx.Run(ctx, c); err != nil {
		return "", fmt.Errorf("reading %s from %s: %w", path, short(id), err)
	}
	tr := tar.NewReader(&buf)
	if _, err := tr.Next(); err != nil {
		return "", err
	}
	data, err := io.ReadAll(tr)
	return string(data), err
}

// Event is one container event.
type Event struct {
	Action string
	ID     string
	Key    string // pod/container from the event's labels
	Time   time.Time
}

func (e Event) String() string {
	return fmt.Sprintf("%s %s %s (%s)", e.Time.Format("15:04:05.000"), e.Action, e.Key, short(e.ID))
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// EventLog records container events from the moment it is started.
type EventLog struct {
	mu     sync.Mutex
	events []Event
	cancel context.CancelFunc
	done   chan struct{}
}

// WatchEvents follows the engine's container events until Stop.
func (d *Docker) WatchEvents(ctx context.Context) (*EventLog, error) {
	ctx, cancel := context.WithCancel(ctx)
	l := &EventLog{cancel: cancel, done: make(chan struct{})}
	// --since now: the engine replays what happened between this call and
	// the CLI's subscription, so nothing after WatchEvents returns is missed.
	now := time.Now()
	since := fmt.Sprintf("%d.%09d", now.Unix(), now.Nanosecond())
	go func() {
		defer close(l.done)
		d.cli.Stream(ctx, func(line []byte) {
			e, err := docker.ParseEvent(line)
			if err != nil {
				return
			}
			key := Container{Labels: e.Attributes}.Key()
			l.mu.Lock()
			l.events = append(l.events, Event{Action: e.Action, ID: e.ID, Key: key, Time: e.Time})
			l.mu.Unlock()
		}, "events", "--since", since, "--filter", "type=container", "--format", docker.EventsFormat)
	}()
	return l, nil
}

// Stop ends the watch.
func (l *EventLog) Stop() {
	l.cancel()
	<-l.done
}

// Events returns the events seen so far.
func (l *EventLog) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Destructive are the actions that mean a container was stopped or replaced.
var Destructive = map[string]bool{"kill": true, "die": true, "stop": true, "destroy": true, "create": true}

// DestructiveFor returns the destructive events so far that concern ids.
func (l *EventLog) DestructiveFor(ids map[string]bool) []Event {
	return DestructiveIn(l.Events(), ids)
}

// DestructiveIn returns the destructive events among events that concern ids.
func DestructiveIn(events []Event, ids map[string]bool) []Event {
	var out []Event
	for _, e := range events {
		if Destructive[e.Action] && ids[e.ID] {
			out = append(out, e)
		}
	}
	return out
}

// Summary renders events for failure messages.
func Summary(events []Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	return b.String()
}
