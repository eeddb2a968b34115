package rehearsal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/cluster/verdict"
	"kubelet-toolchain/tools/execx"
)

// Kubectl runs the control plane's own kubectl against the cluster.
type Kubectl struct {
	Bin, Kubeconfig string
}

// Run runs kubectl with args and returns its standard output.
func (k Kubectl) Run(ctx context.Context, args ...string) ([]byte, error) {
	var out strings.Builder
	_, err := execx.Run(ctx, execx.Cmd{Name: k.Bin, Args: append([]string{"--kubeconfig=" + k.Kubeconfig}, args...), Stdout: &out, Timeout: 2 * time.Minute})
	return []byte(out.String()), err
}

// Pods lists every pod of the cluster except those being deleted, by key.
func (k Kubectl) Pods(ctx context.Context) (map[string]verdict.PodState, []byte, error) {
	raw, err := k.Run(ctx, "get", "pods", "--all-namespaces", "-o", "json")
	if err != nil {
		return nil, nil, err
	}
	pods, err := verdict.ParsePods(raw)
	return pods, raw, err
}

// Events lists the cluster's events (the API server keeps them an hour).
func (k Kubectl) Events(ctx context.Context) ([]verdict.APIEvent, error) {
	raw, err := k.Run(ctx, "get", "events", "--all-namespaces", "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []verdict.APIEvent `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("reading the cluster's events: %w", err)
	}
	return list.Items, nil
}
