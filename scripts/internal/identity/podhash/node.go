package podhash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/execx"
)

// Labels a dockershim kubelet (1.7 through 1.23) puts on every container
// it makes. dockershim stores the kubelet's CRI annotations as labels
// prefixed "annotation.", the container hash among them (in hex).
const (
	labelType          = "io.kubernetes.docker.type"
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodName       = "io.kubernetes.pod.name"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
	labelSandboxID     = "io.kubernetes.sandbox.id"
	labelHash          = "annotation.io.kubernetes.container.hash"
)

// NodeContainer is one running kubelet-made app container of a node.
type NodeContainer struct {
	ID                        string
	Namespace, Pod, Container string
	PodUID                    string
	// SandboxID is the pod sandbox dockershim made it in.
	SandboxID string
	Hash      uint64
	matched   bool
}

// Key is namespace/pod/container as the node names it (static pods carry
// the node name as a suffix).
func (c *NodeContainer) Key() string { return c.Namespace + "/" + c.Pod + "/" + c.Container }

// NodeState is what a live node's engine says of its kubelet's containers.
type NodeState struct {
	Endpoint string
	// NodeName, when known, is the suffix static pod names carry.
	NodeName   string
	Containers []*NodeContainer
	// Hung are the containers whose inspect did not answer within
	// InspectBound (the docker-hang report's containers).
	Hung []*NodeContainer
	// Orphans are the containers whose sandbox container is gone (the
	// orphan report's).
	Orphans []*NodeContainer
}

// Each call ReadNode makes is bounded, with a message naming what did not
// answer: a hung container's inspect never returns, and an engine before
// Docker 17.07 takes every container's lock to list them, so there one
// hung container hangs `docker ps` too.
var (
	// InspectBound: a healthy engine answers an inspect in milliseconds;
	// the patched kubelets give up after 10 s.
	InspectBound = 5 * time.Second
	// ListBound bounds the one `docker ps`.
	ListBound = 30 * time.Second
)

// psFormat prints, per container, one JSON object of its ID and the
// labels read here; `docker ps` reads the engine's container list, which
// takes no container lock (17.07+): a node with a hung container is still
// read.
var psFormat = `{"Id":{{json .ID}},"Labels":{` + strings.Join(func() []string {
	var kv []string
	for _, l := range []string{labelPodNamespace, labelPodName, labelPodUID, labelContainerName, labelSandboxID, labelHash} {
		kv = append(kv, fmt.Sprintf(`%q:{{json (.Label %q)}}`, l, l))
	}
	return kv
}(), ",") + `}}`

// ReadNode lists the running containers a kubelet made on the Docker
// Engine at endpoint (unix:///path) and every sandbox, to find containers
// whose sandbox is gone, then inspects each container, to find those whose
// inspect does not answer. It only reads: two `docker ps`, and one
// `docker inspect` per container.
func ReadNode(ctx context.Context, endpoint, nodeName string) (*NodeState, error) {
	sock, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok || sock == "" {
		return nil, fmt.Errorf("docker endpoint %q: only unix:///path sockets are supported", endpoint)
	}
	type container struct {
		ID     string `json:"Id"`
		Labels map[string]string
	}
	var list []container
	engine := docker.Client{Socket: sock}
	out, err := engine.RunWith(ctx, nil, ListBound, "ps", "--no-trunc", "--filter", "label="+labelType+"=container", "--format", psFormat)
	if errors.Is(err, execx.ErrTimeout) {
		return nil, fmt.Errorf("reading containers from %s: `docker ps` did not answer within %s: engines before Docker 17.07 lock every container to list them, so one hung container hangs the list (find it by inspecting each container with a time bound): %w", endpoint, ListBound, err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading containers from %s: %w", endpoint, err)
	}
	for _, line := range docker.Lines(out) {
		var c container
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return nil, fmt.Errorf("reading containers from %s: %w", endpoint, err)
		}
		list = append(list, c)
	}
	st := &NodeState{Endpoint: endpoint, NodeName: nodeName}
	for _, c := range list {
		// kuberuntime writes the hash in hex (strconv.FormatUint(h, 16)).
		h, err := strconv.ParseUint(c.Labels[labelHash], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("container %s on %s: hash label %s=%q: %v", c.ID, endpoint, labelHash, c.Labels[labelHash], err)
		}
		st.Containers = append(st.Containers, &NodeContainer{ID: c.ID, Namespace: c.Labels[labelPodNamespace], Pod: c.Labels[labelPodName],
			Container: c.Labels[labelContainerName], PodUID: c.Labels[labelPodUID], SandboxID: c.Labels[labelSandboxID], Hash: h})
	}
	// Every sandbox the engine has, running or not: a container whose
	// sandbox is among none of them is the orphan report's.
	out, err = engine.RunWith(ctx, nil, ListBound, "ps", "-a", "-q", "--no-trunc", "--filter", "label="+labelType+"=podsandbox")
	if err != nil {
		return nil, fmt.Errorf("reading sandboxes from %s: %w", endpoint, err)
	}
	sandboxes := map[string]bool{}
	for _, id := range docker.Lines(out) {
		sandboxes[id] = true
	}
	sort.Slice(st.Containers, func(i, j int) bool { return st.Containers[i].Key() < st.Containers[j].Key() })
	for _, c := range st.Containers {
		if c.SandboxID != "" && !sandboxes[c.SandboxID] {
			st.Orphans = append(st.Orphans, c)
		}
		_, err := engine.RunWith(ctx, nil, InspectBound, "inspect", "--type", "container", "--format", "{{.Id}}", c.ID)
		switch {
		case errors.Is(err, execx.ErrTimeout):
			st.Hung = append(st.Hung, c)
		case errors.Is(err, docker.ErrNotFound): // gone since the list
		case err != nil:
			return nil, fmt.Errorf("inspecting container %s (%s) on %s: %w", c.ID, c.Key(), endpoint, err)
		}
	}
	return st, nil
}

// Match finds the running container a helper result describes: the same
// pod name, or the static pod name (<name>-<node name>).
func (s *NodeState) Match(r Result) *NodeContainer {
	ns, pod, _ := strings.Cut(r.Pod, "/")
	var static []*NodeContainer
	for _, c := range s.Containers {
		if c.Namespace != ns || c.Container != r.Container {
			continue
		}
		switch {
		case c.Pod == pod:
			c.matched = true
			return c
		case s.NodeName != "" && c.Pod == pod+"-"+s.NodeName, s.NodeName == "" && strings.HasPrefix(c.Pod, pod+"-"):
			static = append(static, c)
		}
	}
	if len(static) == 1 {
		static[0].matched = true
		return static[0]
	}
	return nil
}

// StoredFor maps the keys of a helper's results to the hashes their
// running containers carry (static pods matched by their manifest name).
func (s *NodeState) StoredFor(results []Result) map[string]uint64 {
	out := map[string]uint64{}
	for _, r := range results {
		if c := s.Match(r); c != nil {
			out[r.Key()] = c.Hash
		}
	}
	return out
}

// Unmatched lists the containers Match never returned.
func (s *NodeState) Unmatched() []string {
	var out []string
	for _, c := range s.Containers {
		if !c.matched {
			out = append(out, c.Key())
		}
	}
	return out
}
