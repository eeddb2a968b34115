package dockerproxy

import (
	"bufio"
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
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"kubelet-toolchain/tools/poll"
)

var (
	hungID = strings.Repeat("a", 64)
	okID   = strings.Repeat("b", 64)
)

// fakeDocker serves a tiny subset of the Engine API on a unix socket.
func fakeDocker(t *testing.T, sock string) {
	t.Helper()
	containers := map[string]string{hungID: "/hung", okID: "/ok"}
	resolve := func(ref string) string {
		for id, name := range containers {
			if ref == id || ref == strings.TrimPrefix(name, "/") || ref == name || (len(ref) >= 3 && strings.HasPrefix(id, ref)) {
				return id
			}
		}
		return ""
	}
	ver := regexp.MustCompile(`^/v[0-9.]+`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := ver.ReplaceAllString(r.URL.EscapedPath(), "")
		segs := strings.Split(strings.Trim(path, "/"), "/")
		for i := range segs {
			segs[i], _ = url.PathUnescape(segs[i])
		}
		switch {
		case path == "/_ping":
			io.WriteString(w, "OK")
		case path == "/version":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"Version":"fake","ApiVersion":"1.31"}`)
		case r.Method == "GET" && len(segs) == 2 && segs[0] == "containers" && segs[1] == "json":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode([]map[string]string{{"Id": hungID}, {"Id": okID}})
		case r.Method == "GET" && len(segs) == 3 && segs[0] == "containers" && segs[2] == "json":
			id := resolve(segs[1])
			if id == "" {
				http.Error(w, `{"message":"No such container"}`, http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"Id": id, "Name": containers[id]})
		case r.Method == "POST" && len(segs) == 3 && segs[0] == "containers" && segs[2] == "start":
			if resolve(segs[1]) == "" {
				http.Error(w, `{"message":"No such container"}`, http.StatusNotFound)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case path == "/events":
			rc := http.NewResponseController(w)
			for i := 0; ; i++ {
				if _, err := fmt.Fprintf(w, "event %d\n", i); err != nil {
					return
				}
				rc.Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		case r.Method == "POST" && len(segs) == 3 && (segs[0] == "containers" && segs[2] == "attach" || segs[0] == "exec" && segs[2] == "start"):
			if segs[0] == "exec" {
				var body struct{ Detach bool }
				json.NewDecoder(r.Body).Decode(&body)
				if body.Detach {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, "{}")
					return
				}
			}
			conn, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			if r.Header.Get("Upgrade") == "tcp" {
				brw.WriteString("HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
			} else {
				brw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n")
			}
			brw.Flush()
			buf := make([]byte, 1024)
			for {
				n, err := brw.Read(buf)
				if n > 0 {
					brw.Write(buf[:n])
					brw.Flush()
				}
				if err != nil {
					return
				}
			}
		default:
			http.NotFound(w, r)
		}
	})
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

func setup(t *testing.T, opts ...Option) (*Proxy, *http.Client) {
	t.Helper()
	dir := t.TempDir()
	up := filepath.Join(dir, "up.sock")
	fakeDocker(t, up)
	p, err := Start(filepath.Join(dir, "px.sock"), up, append([]Option{WithLogf(t.Logf)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, clientFor(p.Socket())
}

func clientFor(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

func get(ctx context.Context, c *http.Client, path string) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://docker"+path, nil)
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func mustGet(t *testing.T, c *http.Client, path, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	code, body, err := get(ctx, c, path)
	if err != nil || code != 200 || !strings.Contains(body, want) {
		t.Fatalf("GET %s: %d %q %v; want 200 containing %q", path, code, body, err, want)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := poll.Until(context.Background(), 5*time.Second, 5*time.Millisecond, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestPassThrough(t *testing.T) {
	_, c := setup(t)
	mustGet(t, c, "/_ping", "OK")
	mustGet(t, c, "/version", "fake")
	mustGet(t, c, "/v1.31/version", "fake")
	mustGet(t, c, "/containers/ok/json", okID)
	mustGet(t, c, "/containers/"+okID+"/json", okID)
	mustGet(t, c, "/v1.31/containers/"+okID+"/json", okID)
	mustGet(t, c, "/containers/"+hungID+"/json", hungID) // not hung yet
}

func TestHangAndRelease(t *testing.T) {
	p, c := setup(t)
	if err := p.Hang("nosuch"); err == nil {
		t.Fatal("Hang of an unknown container succeeded")
	}
	if err := p.Hang("hung"); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		"/containers/" + hungID + "/json",
		"/containers/" + hungID[:12] + "/json",
		"/containers/hung/json",
		"/containers/%2Fhung/json",
		"/v1.31/containers/" + hungID + "/json",
		"/v1.24/containers/hung/json?size=0",
	}
	const deadline = 200 * time.Millisecond
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(paths))
	for i, path := range paths {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			code, _, err := get(ctx, c, path)
			if err == nil {
				err = fmt.Errorf("answered %d", code)
			} else if !errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("want deadline exceeded, got %w", err)
			} else {
				err = nil
			}
			errs[i] = err
		})
	}
	maxHeld := 0
	waitFor(t, "all inspects held", func() bool {
		maxHeld = max(maxHeld, p.HungRequests())
		return len(p.HeldRequests()) == len(paths)
	})
	if maxHeld == 0 {
		t.Error("HungRequests never counted a held request")
	}
	// Other containers and endpoints are unaffected meanwhile.
	mustGet(t, c, "/containers/ok/json", okID)
	mustGet(t, c, "/v1.31/containers/"+okID+"/json", okID)
	wg.Wait()
	elapsed := time.Since(start)
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", paths[i], err)
		}
	}
	if elapsed < deadline {
		t.Errorf("held requests returned after %v, before the client deadline", elapsed)
	}
	waitFor(t, "held requests to drop", func() bool { return p.HungRequests() == 0 })
	held := p.HeldRequests()
	if len(held) != len(paths) {
		t.Fatalf("HeldRequests: %d, want %d", len(held), len(paths))
	}
	for _, h := range held {
		if h.Outcome != "client gave up" || h.Container != hungID || h.Method != "GET" || !strings.HasPrefix(h.UserAgent, "Go-http-client/") {
			t.Errorf("held request record: %+v", h)
		}
	}
	t.Logf("%d inspects held until the client deadline (%v total)", len(paths), elapsed.Round(time.Millisecond))

	// Short prefixes are not matched (only >= 12 characters).
	mustGet(t, c, "/containers/"+hungID[:11]+"/json", hungID)

	p.Release(hungID[:12])
	for _, path := range paths {
		mustGet(t, c, path, hungID)
	}
	if n := len(p.HeldRequests()); n != len(paths) {
		t.Errorf("requests held after Release: %d", n-len(paths))
	}
}

func TestDelayAfterStart(t *testing.T) {
	p, c := setup(t)
	const delay = 400 * time.Millisecond
	mustGet(t, c, "/containers/ok/json", okID) // not started yet: not delayed
	p.DelayAfterStart("o", delay)              // matches "ok", not "hung"

	// The delay runs from when the proxy sees the start, before dockerd
	// answers it: measured from before the request.
	started := time.Now()
	req, _ := http.NewRequest("POST", "http://docker/v1.31/containers/"+okID[:12]+"/start", nil)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("start: %v %v", resp, err)
	}
	resp.Body.Close()

	at := time.Now()
	mustGet(t, c, "/containers/"+hungID+"/json", hungID) // another container: at once
	if took := time.Since(at); took > delay/2 {
		t.Errorf("inspect of a container that was not started took %v", took)
	}
	mustGet(t, c, "/v1.31/containers/ok/json", okID) // by name: held until the delay is over
	if took := time.Since(started); took < delay {
		t.Errorf("inspect after the start answered after %v, want >= %v", took, delay)
	}
	at = time.Now()
	mustGet(t, c, "/containers/"+okID+"/json", okID) // the delay is over: at once
	if took := time.Since(at); took > delay/2 {
		t.Errorf("inspect after the delay took %v", took)
	}
	held := p.HeldRequests()
	if len(held) != 1 || held[0].Outcome != "forwarded after delay" || held[0].Container != okID {
		t.Fatalf("held requests: %v; want one inspect of ok forwarded after delay", held)
	}

	// A client that gives up is not forwarded.
	req, _ = http.NewRequest("POST", "http://docker/containers/ok/start", nil)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), delay/4)
	defer cancel()
	if _, _, err := get(ctx, c, "/containers/ok/json"); err == nil {
		t.Fatalf("inspect with a short client deadline answered during the delay")
	}
	waitFor(t, "the abandoned inspect to be recorded", func() bool {
		h := p.HeldRequests()
		return len(h) == 2 && h[1].Outcome == "client gave up"
	})
}

func TestReleaseForwardsPending(t *testing.T) {
	p, c := setup(t)
	if err := p.Hang(hungID[:12]); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		code, body, err := get(ctx, c, "/v1.31/containers/hung/json")
		if err == nil && (code != 200 || !strings.Contains(body, hungID)) {
			err = fmt.Errorf("answered %d %q", code, body)
		}
		done <- err
	}()
	waitFor(t, "inspect held", func() bool { return p.HungRequests() == 1 })
	start := time.Now()
	p.Release("/hung")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("pending inspect answered %v after Release", time.Since(start).Round(time.Microsecond))
	case <-time.After(2 * time.Second):
		t.Fatal("pending inspect not answered after Release")
	}
	if h := p.HeldRequests(); len(h) != 1 || h[0].Outcome != "released" {
		t.Fatalf("HeldRequests: %v", h)
	}
}

func TestStreaming(t *testing.T) {
	_, c := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://docker/v1.31/events", nil)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := 0; i < 3; i++ {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("event %d\n", i); line != want {
			t.Fatalf("line %d: %q, want %q", i, line, want)
		}
		t.Logf("line %d after %v", i, time.Since(start).Round(time.Millisecond))
		if i == 0 && time.Since(start) > time.Second {
			t.Fatal("first event line was buffered")
		}
	}
}

func TestClientCancelMidStream(t *testing.T) {
	p, c := setup(t)
	for i := 0; i < 5; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://docker/events", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		cancel()
		resp.Body.Close()
		// Give the proxy time to hit the write error on the dead client.
		time.Sleep(120 * time.Millisecond)
		mustGet(t, c, "/_ping", "OK")
	}
	// A fresh client too.
	mustGet(t, clientFor(p.Socket()), "/containers/ok/json", okID)
}

func TestHijack(t *testing.T) {
	p, _ := setup(t)
	cases := []struct {
		name, head, body string
		status           int
	}{
		{"attach upgrade", "POST /v1.31/containers/ok/attach?stream=1&stdin=1&stdout=1 HTTP/1.1\r\nHost: docker\r\nUser-Agent: Go-http-client/1.1\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n", "", 101},
		{"attach raw stream", "POST /containers/" + okID + "/attach?stream=1&stdin=1 HTTP/1.1\r\nHost: docker\r\nContent-Length: 0\r\n", "", 200},
		{"exec start upgrade", "POST /v1.31/exec/e1/start HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Type: application/json\r\n", `{"Detach":false,"Tty":true}`, 101},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("unix", p.Socket())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(conn, "%sContent-Length: %d\r\n\r\n%s", strings.Replace(tc.head, "Content-Length: 0\r\n", "", 1), len(tc.body), tc.body)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || !strings.Contains(resp.Header.Get("Content-Type"), "raw-stream") {
				t.Fatalf("status %s, content type %q", resp.Status, resp.Header.Get("Content-Type"))
			}
			for _, msg := range []string{"hello\n", "second line\n"} {
				io.WriteString(conn, msg)
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(br, got); err != nil || string(got) != msg {
					t.Fatalf("echo: %q %v, want %q", got, err, msg)
				}
			}
			// Half-close stdin: the fake ends the session, the proxy passes EOF back.
			conn.(*net.UnixConn).CloseWrite()
			if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
				t.Fatalf("after close: %q %v", rest, err)
			}
		})
	}
	t.Run("exec start detached", func(t *testing.T) {
		c := clientFor(p.Socket())
		resp, err := c.Post("http://docker/v1.31/exec/e1/start", "application/json", strings.NewReader(`{"Detach":true}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "{}" {
			t.Fatalf("%s %q", resp.Status, b)
		}
	})
}

func TestCloseReleasesHeld(t *testing.T) {
	p, c := setup(t)
	if err := p.Hang(hungID); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		code, _, err := get(ctx, c, "/containers/hung/json")
		if err == nil && code != http.StatusServiceUnavailable {
			err = fmt.Errorf("answered %d, want 503", code)
		}
		held <- err
	}()
	// An open stream and an open hijacked session must not stall Close either.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://docker/events", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	hj, err := net.Dial("unix", p.Socket())
	if err != nil {
		t.Fatal(err)
	}
	defer hj.Close()
	io.WriteString(hj, "POST /containers/ok/attach HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
	hbr := bufio.NewReader(hj)
	if _, err := http.ReadResponse(hbr, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "inspect held", func() bool { return p.HungRequests() == 1 })

	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closeTook := time.Since(start)
	select {
	case err := <-held:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("held request not released by Close")
	}
	t.Logf("Close took %v", closeTook.Round(time.Microsecond))
	if closeTook > time.Second {
		t.Errorf("Close took %v", closeTook)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("stream ended cleanly after Close, want an error")
	}
	hj.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.ReadAll(hbr); err != nil {
		t.Errorf("hijacked session after Close: %v", err)
	}
	if _, err := os.Stat(p.Socket()); !os.IsNotExist(err) {
		t.Errorf("socket still there after Close: %v", err)
	}
	if p.HungRequests() != 0 || p.HeldRequests()[0].Outcome != "proxy closed" {
		t.Errorf("after Close: %d held, %v", p.HungRequests(), p.HeldRequests())
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStaleSocketReplaced(t *testing.T) {
	dir := t.TempDir()
	up := filepath.Join(dir, "up.sock")
	fakeDocker(t, up)
	sock := filepath.Join(dir, "px.sock")
	p1, err := Start(sock, up)
	if err != nil {
		t.Fatal(err)
	}
	// Simulate a crashed predecessor: the socket file stays behind.
	p1.ln.(*net.UnixListener).SetUnlinkOnClose(false)
	p1.Close()
	p2, err := Start(sock, up)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	mustGet(t, clientFor(sock), "/_ping", "OK")
	// Owner and group only (it speaks for a root dockerd), whatever the umask.
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("socket mode %v (%v), want 0660", fi.Mode().Perm(), err)
	}
	if _, err := Start(filepath.Join(dir, "x.sock"), filepath.Join(dir, "missing.sock")); err == nil {
		t.Error("Start with a missing upstream succeeded")
	}
}

// A list passes a hung container by default (engines from 17.07); with
// WithListLocking it is held until the container is released, or until
// the client gives up (recorded with the list's path), as on 17.05.
func TestListLocking(t *testing.T) {
	const list = "/v1.24/containers/json?all=1"
	t.Run("17.07 and later", func(t *testing.T) {
		p, c := setup(t)
		if err := p.Hang("hung"); err != nil {
			t.Fatal(err)
		}
		mustGet(t, c, list, okID)
		if n := len(p.HeldRequests()); n != 0 {
			t.Errorf("%d requests held; a list takes no container lock", n)
		}
	})
	t.Run("imitating 1.13.1 and 17.05", func(t *testing.T) {
		p, c := setup(t, WithListLocking())
		mustGet(t, c, list, hungID) // nothing hung: answered at once
		if err := p.Hang("hung"); err != nil {
			t.Fatal(err)
		}
		const deadline = 200 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		start := time.Now()
		_, _, err := get(ctx, c, list)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < deadline {
			t.Fatalf("list with a hung container: %v after %v; want it held until the client deadline", err, time.Since(start))
		}
		waitFor(t, "the held list to drop", func() bool { return p.HungRequests() == 0 })
		held := p.HeldRequests()
		if len(held) != 1 || held[0].Path != list || held[0].Container != hungID || held[0].Outcome != "client gave up" {
			t.Fatalf("held requests: %v; want the list, held for %.12s until the client gave up", held, hungID)
		}

		// Released while a list waits: the list is answered, in full.
		done := make(chan string, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			code, body, err := get(ctx, c, list)
			done <- fmt.Sprintf("%d %s %v", code, body, err)
		}()
		waitFor(t, "a second list to be held", func() bool { return p.HungRequests() == 1 })
		select {
		case got := <-done:
			t.Fatalf("list answered while its container was hung: %s", got)
		case <-time.After(100 * time.Millisecond):
		}
		p.Release("hung")
		got := <-done
		if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, hungID) || !strings.Contains(got, okID) {
			t.Fatalf("list after release: %s", got)
		}
	})
}
