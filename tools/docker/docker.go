// Package docker is the one way the toolchain, the rehearsal and the e2e
// talk to a Docker Engine: the Docker CLI, run through execx against one
// engine's socket, never the machine's default one.
//
// Why the CLI and not an API client: it is what every dockershim node has,
// at its engine's own version, and it negotiates the API version itself
// (the engines here are Debian's 20.10; operators' nodes run 1.13 to
// 20.10); it does what the rehearsal needs beyond the API's simple calls
// (run with a node's flags, exec, load, cp) with the same code path; and
// each call is a pasteable command line in the toolchain's -v log.
package docker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"kubelet-toolchain/tools/execx"
)

// CLI is Debian's docker client (docker.io); a newer one may come first
// on PATH.
const CLI = "/usr/bin/docker"

// DefaultTimeout bounds a call that sets none.
const DefaultTimeout = 10 * time.Minute

// ErrNotFound marks a call about a container (or image, volume) the engine
// does not have.
var ErrNotFound = errors.New("not found")

// Client runs the Docker CLI against the engine at Socket (a unix socket
// path).
type Client struct {
	Socket string
}

// Run runs docker with args and returns its standard output, trimmed.
func (c Client) Run(ctx context.Context, args ...string) (string, error) {
	return c.RunWith(ctx, nil, DefaultTimeout, args...)
}

// RunWith is Run with standard input and a timeout.
func (c Client) RunWith(ctx context.Context, stdin io.Reader, timeout time.Duration, args ...string) (string, error) {
	if c.Socket == "" {
		return "", fmt.Errorf("docker %s: no engine socket given", strings.Join(args, " "))
	}
	out, err := execx.Run(ctx, execx.Cmd{Name: CLI, Args: c.args(args), Stdin: stdin, Timeout: timeout})
	if err != nil && isNotFound(err) {
		err = fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return string(bytes.TrimSpace(out)), err
}

func (c Client) args(args []string) []string {
	return append([]string{"-H", "unix://" + c.Socket}, args...)
}

// isNotFound recognises the CLI's "no such" errors (container, image,
// object, volume).
func isNotFound(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "no such ")
}

// Lines runs docker and splits its one-per-line output, dropping empty
// lines (IDs from ps -q, names from ls -q).
func (c Client) Lines(ctx context.Context, args ...string) ([]string, error) {
	out, err := c.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	return Lines(out), nil
}

// Lines splits one-per-line output, dropping empty lines.
func Lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Inspect runs docker inspect on ids and decodes its JSON array into out
// (a pointer to a slice).
func (c Client) Inspect(ctx context.Context, out any, ids ...string) error {
	raw, err := c.Run(ctx, append([]string{"inspect", "--type", "container"}, ids...)...)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(raw), out)
}

// JSONLines runs docker with a --format that prints one JSON object per
// line and decodes each line with fn.
func (c Client) JSONLines(ctx context.Context, fn func(line []byte) error, args ...string) error {
	out, err := c.Run(ctx, args...)
	if err != nil {
		return err
	}
	for _, l := range Lines(out) {
		if err := fn([]byte(l)); err != nil {
			return fmt.Errorf("docker %s: %w (line %q)", strings.Join(args, " "), err, l)
		}
	}
	return nil
}

// Stream runs docker with args until ctx is done, calling fn with each line
// of its standard output (docker events --format '{{json .}}'). It
// returns once the command has ended.
func (c Client) Stream(ctx context.Context, fn func(line []byte), args ...string) error {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			fn(sc.Bytes())
		}
		io.Copy(io.Discard, pr)
	}()
	_, err := execx.Run(ctx, execx.Cmd{Name: CLI, Args: c.args(args), Stdout: pw, Timeout: 24 * time.Hour})
	pw.Close()
	<-done
	if ctx.Err() != nil {
		return nil // stopped on purpose
	}
	return err
}

// Cmd is the command line of docker with args against this engine, for a
// caller that runs it itself (a stream it pipes, a process it keeps).
func (c Client) Cmd(args ...string) execx.Cmd {
	return execx.Cmd{Name: CLI, Args: c.args(args)}
}

// Machine is the machine's own engine, as a docker client finds it
// ($DOCKER_HOST when it names a unix socket, else /var/run/docker.sock):
// only ever read from (images an operator names).
func Machine() Client {
	if s, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok && s != "" {
		return Client{Socket: s}
	}
	return Client{Socket: "/var/run/docker.sock"}
}

// EventsFormat makes docker events print one JSON object per line.
const EventsFormat = "{{json .}}"

// Event is one container event.
type Event struct {
	Time   time.Time
	Action string // create, start, die, destroy, kill, exec_start, ...
	ID     string
	// Attributes hold the container's labels (io.kubernetes.pod.name,
	// io.kubernetes.pod.uid, io.kubernetes.container.name, ...), its name
	// and image.
	Attributes map[string]string
}

// ParseEvent reads one line of docker events --format EventsFormat.
func ParseEvent(line []byte) (Event, error) {
	var raw struct {
		Action   string `json:"Action"`
		TimeNano int64  `json:"timeNano"`
		Actor    struct {
			ID         string            `json:"ID"`
			Attributes map[string]string `json:"Attributes"`
		} `json:"Actor"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return Event{}, fmt.Errorf("event %q: %w", line, err)
	}
	return Event{Time: time.Unix(0, raw.TimeNano), Action: raw.Action, ID: raw.Actor.ID, Attributes: raw.Actor.Attributes}, nil
}
