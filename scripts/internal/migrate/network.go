package migrate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"kubelet-toolchain/tools/docker"
)

// DockerEndpoint is dockershim's default --docker-endpoint.
const DockerEndpoint = "unix:///var/run/docker.sock"

// Sandbox is a pod sandbox running on the node's engine: its pod and the
// Docker network mode dockershim made it with.
type Sandbox struct {
	Pod, NetworkMode string
}

// sandboxMode is the network mode dockershim gives a pod's sandbox under
// a network plugin (modifyHostOptionsForSandbox, 1.23): "none" under cni
// and kubenet, which wire the namespace themselves; Docker's bridge
// ("default") without one. hostNetwork sandboxes are "host" under any.
func sandboxMode(plugin string) string {
	if plugin == "cni" || plugin == "kubenet" {
		return "none"
	}
	return "default"
}

// NetworkMismatch returns the sandboxes a shim started with plugin would
// not read the network of, one line each: it would report no IP for them
// and the kubelet of 1.24 would replace every such pod ("Sandbox for pod
// has no IP address. Need to start a new one", rancher/rke2#3723).
func NetworkMismatch(plugin string, sandboxes []Sandbox) []string {
	want := sandboxMode(plugin)
	var out []string
	for _, s := range sandboxes {
		if s.NetworkMode == "host" || s.NetworkMode == want {
			continue
		}
		made := "no network plugin (Docker's bridge)"
		if s.NetworkMode == "none" {
			made = "a network plugin (cni or kubenet)"
		}
		out = append(out, fmt.Sprintf("%s: its sandbox was made under %s (network mode %q)", s.Pod, made, s.NetworkMode))
	}
	sort.Strings(out)
	return out
}

// ReadSandboxes lists the running pod sandboxes on the engine at endpoint
// (unix://...), as the shim will find them.
func ReadSandboxes(ctx context.Context, endpoint string) ([]Sandbox, error) {
	sock, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok {
		return nil, fmt.Errorf("docker endpoint %q: only a unix socket is read", endpoint)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := docker.Client{Socket: sock}
	ids, err := c.Lines(ctx, "ps", "-q", "--no-trunc", "--filter", "label=io.kubernetes.docker.type=podsandbox")
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	var info []struct {
		Config struct {
			Labels map[string]string
		}
		HostConfig struct {
			NetworkMode string
		}
	}
	if err := c.Inspect(ctx, &info, ids...); err != nil {
		return nil, err
	}
	out := make([]Sandbox, 0, len(info))
	for _, i := range info {
		l := i.Config.Labels
		out = append(out, Sandbox{Pod: l["io.kubernetes.pod.namespace"] + "/" + l["io.kubernetes.pod.name"], NetworkMode: i.HostConfig.NetworkMode})
	}
	return out, nil
}

// ShimFlag returns the value of flag name among the plan's shim flags
// (the DOCKERSHIM_ARGS it writes), and whether it is set.
func (p *Plan) ShimFlag(name string) (string, bool) {
	for _, r := range p.Rows {
		if r.Flag.Name == name && (r.Where == Shim || r.Where == Both) {
			return r.Flag.Value, true
		}
	}
	return "", false
}
