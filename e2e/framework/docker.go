package framework

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// EngineSocketEnv names the variable pointing the suites at the e2e's own
// Docker Engine (scripts/e2e.sh sets it).
const EngineSocketEnv = "E2E_DOCKER_SOCKET"

// EngineLabel is the daemon label tools/engine-up.sh gives its engine,
// valued with the repository root.
const EngineLabel = "io.kubelet-toolchain.e2e-engine"

// ErrNotOurEngine is returned for an engine tools/engine-up.sh did not
// start: on a dockershim node the machine's engine runs production pods,
// and the suites remove every kubelet-made container they see.
var ErrNotOurEngine = errors.New("not the e2e's own Docker Engine")

// EngineSocket is the socket of the e2e's own engine: $E2E_DOCKER_SOCKET,
// else _output/engine/docker.sock under the repository root. Never the
// machine's default socket.
func EngineSocket(root string) string {
	if s := os.Getenv(EngineSocketEnv); s != "" {
		return s
	}
	return filepath.Join(root, "_output", "engine", "docker.sock")
}

// EngineLog is the log of the e2e's own dockerd (tools/engine-up.sh).
func EngineLog(root string) string {
	return filepath.Join(root, "_output", "engine", "dockerd.log")
}

// Docker is a small client of the Docker Engine API on a unix socket:
// just what the suites observe and clean up with.
type Docker struct {
	Socket string
	http   *http.Client
}

// NewDocker connects to the engine at socket.
func NewDocker(socket string) *Docker {
	return &Docker{Socket: socket, http: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}}
}

// CheckOurs fails with ErrNotOurEngine unless the engine carries
// EngineLabel valued with root: a check made before anything is listed or
// removed, so a wrong socket costs a failed suite, not a node's pods.
func (d *Docker) CheckOurs(ctx context.Context, root string) error {
	var info struct {
		Labels        []string `json:"Labels"`
		DockerRootDir string   `json:"DockerRootDir"`
	}
	if err := d.do(ctx, http.MethodGet, "/info", nil, &info); err != nil {
		return err
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

// ErrNotFound is what the engine answers 404 for (no such container).
var ErrNotFound = errors.New("not found")

func (d *Docker) do(ctx context.Context, method, path string, q url.Values, out any) error {
	u := "http://docker" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return fmt.Errorf("docker %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		err := fmt.Errorf("docker %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(body)))
		if resp.StatusCode == http.StatusNotFound {
			err = fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return err
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Container is one entry of the container list.
type Container struct {
	ID      string            `json:"Id"`
	Names   []string          `json:"Names"`
	Image   string            `json:"Image"`
	State   string            `json:"State"`
	Created int64             `json:"Created"`
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
	// LabelNativeHash is the patched 1.9 kubelet's own-schema hash, next
	// to the 1.7 hash it writes under LabelHash.
	LabelNativeHash = "annotation.io.kubernetes.container.hash.v1.9"
)

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
func (d *Docker) KubeContainers(ctx context.Context) ([]Container, error) {
	var out []Container
	filters, _ := json.Marshal(map[string][]string{"label": {LabelDockerType}})
	err := d.do(ctx, http.MethodGet, "/containers/json", url.Values{"all": {"1"}, "filters": {string(filters)}}, &out)
	return out, err
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
	var out Inspect
	return &out, d.do(ctx, http.MethodGet, "/containers/"+id+"/json", nil, &out)
}

// InspectRaw returns `docker inspect` of a container as the engine gives it,
// for failure reports.
func (d *Docker) InspectRaw(ctx context.Context, id string) (string, error) {
	var out json.RawMessage
	if err := d.do(ctx, http.MethodGet, "/containers/"+id+"/json", nil, &out); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, out, "", "  "); err != nil {
		return string(out), nil
	}
	return b.String(), nil
}

// Kill sends SIGKILL to a container's main process, as a crash would.
func (d *Docker) Kill(ctx context.Context, id string) error {
	return d.do(ctx, http.MethodPost, "/containers/"+id+"/kill", url.Values{"signal": {"KILL"}}, nil)
}

// RemoveContainer force-removes a container and its anonymous volumes.
func (d *Docker) RemoveContainer(ctx context.Context, id string) error {
	return d.do(ctx, http.MethodDelete, "/containers/"+id, url.Values{"force": {"1"}, "v": {"1"}}, nil)
}

// ReadFile reads a file out of a container's filesystem (its writable
// layer included) through the archive endpoint: no exec needed.
func (d *Docker) ReadFile(ctx context.Context, id, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/containers/"+id+"/archive?path="+url.QueryEscape(path), nil)
	if err != nil {
		return "", err
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("reading %s from %s: %s", path, id[:12], resp.Status)
	}
	tr := tar.NewReader(resp.Body)
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
	filters, _ := json.Marshal(map[string][]string{"type": {"container"}})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/events?filters="+url.QueryEscape(string(filters)), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := d.http.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	l := &EventLog{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m struct {
				Action   string `json:"Action"`
				TimeNano int64  `json:"timeNano"`
				Actor    struct {
					ID         string            `json:"ID"`
					Attributes map[string]string `json:"Attributes"`
				} `json:"Actor"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			key := Container{Labels: m.Actor.Attributes}.Key()
			l.mu.Lock()
			l.events = append(l.events, Event{Action: m.Action, ID: m.Actor.ID, Key: key, Time: time.Unix(0, m.TimeNano)})
			l.mu.Unlock()
		}
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
