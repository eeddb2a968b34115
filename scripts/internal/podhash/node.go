package podhash

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"kubelet-toolchain/tools/docker"
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
	labelHash          = "annotation.io.kubernetes.container.hash"
)

// NodeContainer is one running kubelet-made app container of a node.
type NodeContainer struct {
	ID                        string
	Namespace, Pod, Container string
	PodUID                    string
	Hash                      uint64
	matched                   bool
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
}

// psFormat prints, per container, one JSON object of its ID and the
// labels read here; `docker ps` reads the engine's container list, which
// takes no container lock (17.07+): a node with a hung container is still
// read.
var psFormat = `{"Id":{{json .ID}},"Labels":{` + strings.Join(func() []string {
	var kv []string
	for _, l := range []string{labelPodNamespace, labelPodName, labelPodUID, labelContainerName, labelHash} {
		kv = append(kv, fmt.Sprintf(`%q:{{json (.Label %q)}}`, l, l))
	}
	return kv
}(), ",") + `}}`

// ReadNode lists the running containers a kubelet made on the Docker
// Engine at endpoint (unix:///path). It only reads: one `docker ps`.
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
	err := docker.Client{Socket: sock}.JSONLines(ctx, func(line []byte) error {
		var c container
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		list = append(list, c)
		return nil
	}, "ps", "--no-trunc", "--filter", "label="+labelType+"=container", "--format", psFormat)
	if err != nil {
		return nil, fmt.Errorf("reading containers from %s: %w", endpoint, err)
	}
	st := &NodeState{Endpoint: endpoint, NodeName: nodeName}
	for _, c := range list {
		// kuberuntime writes the hash in hex (strconv.FormatUint(h, 16)).
		h, err := strconv.ParseUint(c.Labels[labelHash], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("container %s on %s: hash label %s=%q: %v", c.ID, endpoint, labelHash, c.Labels[labelHash], err)
		}
		st.Containers = append(st.Containers, &NodeContainer{ID: c.ID, Namespace: c.Labels[labelPodNamespace], Pod: c.Labels[labelPodName],
			Container: c.Labels[labelContainerName], PodUID: c.Labels[labelPodUID], Hash: h})
	}
	sort.Slice(st.Containers, func(i, j int) bool { return st.Containers[i].Key() < st.Containers[j].Key() })
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
