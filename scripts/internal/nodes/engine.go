package nodes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/execx"
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

// dockerCLI is Debian's client; a newer one may come first on PATH.
const dockerCLI = "/usr/bin/docker"

// Engine is the Docker Engine the nodes run on (the rehearsal's own,
// tools/engine-up.sh with ENGINE_DIR=_output/rehearsal/engine).
type Engine struct {
	// Socket is the engine's unix socket path.
	Socket string
}

// Docker runs the Debian docker client against the engine and returns
// its combined output.
func (e Engine) Docker(ctx context.Context, args ...string) (string, error) {
	return e.run(ctx, nil, 10*time.Minute, args...)
}

func (e Engine) run(ctx context.Context, stdin io.Reader, timeout time.Duration, args ...string) (string, error) {
	if e.Socket == "" {
		return "", fmt.Errorf("docker %s: no engine socket given", strings.Join(args, " "))
	}
	out, err := execx.Run(ctx, execx.Cmd{
		Name:    dockerCLI,
		Args:    append([]string{"-H", "unix://" + e.Socket}, args...),
		Stdin:   stdin,
		Timeout: timeout,
	})
	return string(bytes.TrimSpace(out)), err
}

// lines splits docker's one-per-line output, dropping empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// RemoveAll removes every container, volume and network on the engine
// labelled LabelRehearsal=root, and nothing else.
func RemoveAll(ctx context.Context, e Engine, root string) error {
	filter := "label=" + LabelRehearsal + "=" + root
	out, err := e.Docker(ctx, "ps", "-aq", "--filter", filter)
	if err != nil {
		return fmt.Errorf("list rehearsal containers: %w", err)
	}
	if ids := lines(out); len(ids) > 0 {
		if _, err := e.Docker(ctx, append([]string{"rm", "-f", "-v"}, ids...)...); err != nil {
			return fmt.Errorf("remove rehearsal containers: %w", err)
		}
	}
	out, err = e.Docker(ctx, "volume", "ls", "-q", "--filter", filter)
	if err != nil {
		return fmt.Errorf("list rehearsal volumes: %w", err)
	}
	if vs := lines(out); len(vs) > 0 {
		if _, err := e.Docker(ctx, append([]string{"volume", "rm", "-f"}, vs...)...); err != nil {
			return fmt.Errorf("remove rehearsal volumes: %w", err)
		}
	}
	out, err = e.Docker(ctx, "network", "ls", "-q", "--filter", filter)
	if err != nil {
		return fmt.Errorf("list rehearsal networks: %w", err)
	}
	if ns := lines(out); len(ns) > 0 {
		if _, err := e.Docker(ctx, append([]string{"network", "rm"}, ns...)...); err != nil {
			return fmt.Errorf("remove rehearsal networks: %w", err)
		}
	}
	return nil
}
