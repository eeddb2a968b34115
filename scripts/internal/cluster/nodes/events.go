package nodes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"kubelet-toolchain/tools/docker"
	"kubelet-toolchain/tools/execx"
)

// Event is one container event of a node's inner engine.
type Event = docker.Event

// Events returns the inner engine's container events from since until
// now. dockerd keeps only its last 256 events in memory: for anything
// longer than a short window use RecordEvents.
func (n *Node) Events(ctx context.Context, since time.Time) ([]Event, error) {
	out, err := n.Docker(ctx, "events", "--filter", "type=container",
		"--since", unixNano(since), "--until", unixNano(time.Now()), "--format", docker.EventsFormat)
	if err != nil {
		return nil, fmt.Errorf("node %s: events: %w", n.Name, err)
	}
	var evs []Event
	for _, l := range docker.Lines(out) {
		ev, err := docker.ParseEvent([]byte(l))
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// EventRecorder streams a node's inner container events until stopped.
type EventRecorder struct {
	node  string
	p     *execx.Process
	stdin *io.PipeWriter
	done  chan struct{}
	mu    sync.Mutex
	evs   []Event
	err   error
}

// RecordEvents starts streaming the node's inner container events. The
// inner `docker events` ends when its stdin closes (Stop), so nothing is
// left running in the node.
func (n *Node) RecordEvents(ctx context.Context) (*EventRecorder, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p, err := execx.Start(ctx, withIO(n.cluster.Engine.Cmd("exec", "-i", n.Container, "sh", "-c",
		`docker events --filter type=container --format '`+docker.EventsFormat+`' & p=$!; cat >/dev/null; kill $p`),
		inR, outW, 24*time.Hour))
	if err != nil {
		return nil, fmt.Errorf("node %s: record events: %w", n.Name, err)
	}
	r := &EventRecorder{node: n.Name, p: p, stdin: inW, done: make(chan struct{})}
	go func() { outW.CloseWithError(p.Wait()) }()
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			ev, err := docker.ParseEvent(sc.Bytes())
			r.mu.Lock()
			if err != nil && r.err == nil {
				r.err = err
			} else if err == nil {
				r.evs = append(r.evs, ev)
			}
			r.mu.Unlock()
		}
	}()
	return r, nil
}

// Events returns the events recorded so far.
func (r *EventRecorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

// Stop ends the stream and returns every recorded event.
func (r *EventRecorder) Stop() ([]Event, error) {
	r.stdin.Close()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.p.Stop()
		<-r.done
	}
	err := r.p.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.evs, fmt.Errorf("node %s: %w", r.node, r.err)
	}
	// Closing stdin ends `cat`, which kills `docker events`: exit 143 is ours.
	if err != nil && !strings.Contains(err.Error(), "exit status 143") {
		return r.evs, fmt.Errorf("node %s: record events: %w", r.node, err)
	}
	return r.evs, nil
}
