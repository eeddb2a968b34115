package nodes

import (
	"context"
	"fmt"
	"io"
	"time"

	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/execx"
)

// Labels put on every container and volume this package makes.
const (
	// LabelRehearsal's value is the repository root: RemoveAll finds
	// exactly what this checkout made and nothing else.
	LabelRehearsal = "io.kubelet-toolchain.rehearsal"
	// LabelCluster's value is Cluster.Name.
	LabelCluster = "io.kubelet-toolchain.rehearsal.cluster"
	// LabelNode's value is the node name.
	LabelNode = "io.kubelet-toolchain.rehearsal.node"
)

// Engine is the Docker Engine the nodes run on (the rehearsal's own,
// tools/engine-up.sh with ENGINE_DIR=_output/rehearsal/engine), reached as
// everything reaches an engine: the docker CLI against its socket.
type Engine = docker.Client

// RemoveAll removes every container, volume and network on the engine
// labelled LabelRehearsal=root, and nothing else.
func RemoveAll(ctx context.Context, e docker.Client, root string) error {
	return removeLabelled(ctx, e, "label="+LabelRehearsal+"="+root)
}

// RemoveCluster removes every container, volume and network on the engine
// labelled both LabelRehearsal=root and LabelCluster=name: one cluster,
// never another cluster of the same checkout.
func RemoveCluster(ctx context.Context, e docker.Client, root, name string) error {
	if root == "" || name == "" {
		return fmt.Errorf("remove cluster: root %q and name %q must both be set", root, name)
	}
	return removeLabelled(ctx, e, "label="+LabelRehearsal+"="+root, "label="+LabelCluster+"="+name)
}

// removeLabelled removes what matches every one of filters (docker ANDs
// label filters).
func removeLabelled(ctx context.Context, e docker.Client, filters ...string) error {
	var f []string
	for _, x := range filters {
		f = append(f, "--filter", x)
	}
	out, err := e.Run(ctx, append([]string{"ps", "-aq"}, f...)...)
	if err != nil {
		return fmt.Errorf("list rehearsal containers: %w", err)
	}
	if ids := docker.Lines(out); len(ids) > 0 {
		if _, err := e.Run(ctx, append([]string{"rm", "-f", "-v"}, ids...)...); err != nil {
			return fmt.Errorf("remove rehearsal containers: %w", err)
		}
	}
	out, err = e.Run(ctx, append([]string{"volume", "ls", "-q"}, f...)...)
	if err != nil {
		return fmt.Errorf("list rehearsal volumes: %w", err)
	}
	if vs := docker.Lines(out); len(vs) > 0 {
		if _, err := e.Run(ctx, append([]string{"volume", "rm", "-f"}, vs...)...); err != nil {
			return fmt.Errorf("remove rehearsal volumes: %w", err)
		}
	}
	out, err = e.Run(ctx, append([]string{"network", "ls", "-q"}, f...)...)
	if err != nil {
		return fmt.Errorf("list rehearsal networks: %w", err)
	}
	if ns := docker.Lines(out); len(ns) > 0 {
		if _, err := e.Run(ctx, append([]string{"network", "rm"}, ns...)...); err != nil {
			return fmt.Errorf("remove rehearsal networks: %w", err)
		}
	}
	return nil
}

// withIO gives a command its pipes and timeout.
func withIO(c execx.Cmd, stdin io.Reader, stdout io.Writer, timeout time.Duration) execx.Cmd {
	c.Stdin, c.Stdout, c.Timeout = stdin, stdout, timeout
	return c
}
