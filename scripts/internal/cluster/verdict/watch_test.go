package verdict

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Every probe opens its own connection: a kept-alive one would ride out a
// switch that breaks new connections.
func TestProberOpensAConnectionPerRequest(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	p := &Prober{Targets: []Target{{Addr: strings.TrimPrefix(srv.URL, "http://")}}, Interval: 10 * time.Millisecond, Log: t.Logf}
	modes := p.Modes(context.Background())
	if len(modes) != 1 {
		t.Fatalf("modes: %v", modes)
	}
	before := conns.Load() // the mode check's
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	p.Run(ctx, modes)
	requests, failed, detail := p.Counts()
	if requests < 5 || failed != 0 {
		t.Fatalf("%d requests, %d failed %v", requests, failed, detail)
	}
	// A kept-alive connection would serve several requests (fewer
	// connections than requests). One more connection than requests is the
	// probe the deadline cut short: opened, never counted (CI saw 29 over 30).
	if got := conns.Load() - before; got != int64(requests) && got != int64(requests)+1 {
		t.Errorf("%d requests over %d connections; want one each", requests, got)
	}
}

// The in-node check is one long-lived process running tcpCheckScript
// (here run by the machine's bash, as a node's docker exec runs it): it
// tells an open port from a closed one, and a process that died is
// replaced at the next check.
func TestTCPChecker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	_, open, _ := net.SplitHostPort(ln.Addr().String())

	starts := 0
	c := newTCPChecker(func() *exec.Cmd { starts++; return exec.Command("bash", "-c", tcpCheckScript) })
	defer c.Close()
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if err := c.check(ctx, "127.0.0.1", open); err != nil {
			t.Fatalf("open port: %v", err)
		}
	}
	if err := c.check(ctx, "127.0.0.1", strconv.Itoa(closedPort)); err == nil {
		t.Fatal("closed port: no error")
	}
	if starts != 1 {
		t.Errorf("%d processes for 4 checks; want one", starts)
	}
	c.mu.Lock()
	c.cmd.Process.Kill()
	c.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	// The dead process fails one check at most, then another is started.
	if err := c.check(ctx, "127.0.0.1", open); err != nil {
		if err := c.check(ctx, "127.0.0.1", open); err != nil {
			t.Fatalf("after the process died: %v", err)
		}
	}
	if starts != 2 {
		t.Errorf("%d processes after one died; want 2", starts)
	}
}
