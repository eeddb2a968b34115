// Package dockerproxy is a fault-injecting Docker Engine API proxy: the
// node e2e's, and the rehearsal's FAULTS=hang in front of one node's dockerd.
//
// The proxy listens on a unix socket and forwards every request to the real
// dockerd socket, with one exception: for containers marked with Hang it
// never answers `GET [/vX.Y]/containers/<id>/json`. Such a request is held
// open until the client gives up, the container is released, or the proxy is
// closed. That is what clients see when dockerd hangs on one container's
// lock, and because the proxy sits in front of dockerd it affects every
// client pointed at it (kubelet's dockershim via --docker-endpoint and
// cadvisor via --docker).
//
// A held inspect matches the hung container by full id, by any id prefix of
// at least 12 characters, by any of its names (with or without the leading
// "/"), and by the exact string passed to Hang. Versioned (/v1.31/...) and
// unversioned paths are treated alike.
//
// DelayAfterStart slows a container start instead: once a container whose
// name contains a given fragment is started (POST .../containers/<id>/start),
// every inspect of it that arrives within a given time of that start is held
// until that time has passed, then forwarded. That is what a kubelet sees
// when dockerd is slow to hand over a container it has just started (the
// inspect dockershim sends right after the start, for the log symlink).
//
// WithListLocking imitates the container listing of engines before
// Docker 17.07: `GET /containers/json` is
// answered only after every listed container has been inspected through
// the proxy's fault injection, so one container whose inspect hangs makes
// the whole list hang, as its lock did in Docker 1.13.1 and 17.05 (see
// WithListLocking). Engines from 17.07 list without container locks, which
// is what the proxy does by default.
//
// Everything else is passed through: ordinary requests by an
// httputil.ReverseProxy that flushes immediately (events, logs with follow
// and stats streams arrive as they are produced), and hijacked endpoints
// (POST .../containers/<id>/attach, POST .../exec/<id>/start and any request
// carrying Connection: Upgrade) by a raw byte pipe, so both the
// "101 UPGRADED / Upgrade: tcp" form and docker's older
// "200 OK / application/vnd.docker.raw-stream" hijack work.
package dockerproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// DefaultUpstream is the dockerd socket used when Start gets an empty
// upstream path.
const DefaultUpstream = "/var/run/docker.sock"

// minPrefix is the shortest id prefix that matches a hung container.
const minPrefix = 12

// Option configures a Proxy at Start.
type Option func(*Proxy)

// WithLogf sends the proxy's log lines (held requests, their outcome,
// upstream errors) to logf, e.g. t.Logf.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(p *Proxy) { p.logf = logf }
}

// WithLogWriter writes the proxy's log lines, one per line, to w.
func WithLogWriter(w io.Writer) Option {
	var mu sync.Mutex
	return WithLogf(func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "dockerproxy: "+strings.TrimSuffix(format, "\n")+"\n", args...)
	})
}

// WithListLocking makes the proxy imitate the container listing of Docker
// 1.13.1 and 17.03 to 17.06: before moby/moby#31273 (first released in
// 17.07.0-ce) `docker ps` took every container's lock in turn while
// building its answer (reducePsContainer in daemon/list.go), the same lock
// an inspect takes (daemon/inspect.go, unchanged through 20.10). From 17.07
// the list is read from an in-memory replica without container locks, so a
// container whose lock is stuck hangs its inspects but not the list.
//
// The engine this proxy fronts is newer, so the old behaviour is imitated:
// a `GET /containers/json` is forwarded, and its answer is held back until
// each listed container has been inspected through the same fault
// injection as a client's inspect (Hang, DelayAfterStart) and through
// dockerd (the lock a real inspect takes). A hung container thus holds the
// list until it is released or the client gives up; such a list shows in
// HeldRequests with the list's path and the hung container's id.
func WithListLocking() Option {
	return func(p *Proxy) { p.listLocking = true }
}

// HeldRequest records one inspect request the proxy held.
type HeldRequest struct {
	Method    string
	Path      string // request URI as the client sent it
	UserAgent string
	Container string // full id of the hung container it matched
	Start     time.Time
	End       time.Time // zero while still held
	// Outcome is "held" while the request is pending, then one of
	// "released" (forwarded to dockerd after Release), "forwarded after
	// delay" (DelayAfterStart), "client gave up" or "proxy closed"
	// (answered 503).
	Outcome string
}

func (h HeldRequest) String() string {
	d := "still held"
	if !h.End.IsZero() {
		d = h.End.Sub(h.Start).Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%s %s (user agent %q, container %.12s): %s after %s",
		h.Method, h.Path, h.UserAgent, h.Container, h.Outcome, d)
}

// slowRule is a DelayAfterStart call.
type slowRule struct {
	fragment string
	delay    time.Duration
}

// slowContainer is a started container whose inspects are held until until.
type slowContainer struct {
	hungContainer
	until time.Time
}

type hungContainer struct {
	id      string
	names   []string // without leading "/"
	aliases []string // strings passed to Hang
	release chan struct{}
}

func (h *hungContainer) matches(ref string) bool {
	ref = strings.TrimPrefix(ref, "/")
	if ref == "" {
		return false
	}
	if ref == h.id || (len(ref) >= minPrefix && strings.HasPrefix(h.id, ref)) {
		return true
	}
	for _, n := range h.names {
		if ref == n {
			return true
		}
	}
	for _, a := range h.aliases {
		if ref == a {
			return true
		}
	}
	return false
}

// Proxy is a running fault-injecting proxy. Its methods are safe for
// concurrent use.
type Proxy struct {
	socket   string
	upstream string
	logf     func(format string, args ...any)
	// listLocking imitates pre-17.07 list locking (WithListLocking).
	listLocking bool

	ln        net.Listener
	srv       *http.Server
	transport *http.Transport
	rp        *httputil.ReverseProxy

	ctx    context.Context // parent of every request context; canceled by Close
	cancel context.CancelFunc

	mu       sync.Mutex
	closed   bool
	hung     []*hungContainer
	slowRule []slowRule
	slow     []*slowContainer
	held     int
	history  []*HeldRequest
	handlers sync.WaitGroup
	closeErr error
	done     chan struct{}
}

// Start listens on listenSocket (a stale socket file there is replaced) and
// serves in the background, forwarding to upstreamSocket (DefaultUpstream if
// empty). It fails if the upstream socket cannot be dialed.
func Start(listenSocket, upstreamSocket string, opts ...Option) (*Proxy, error) {
	if upstreamSocket == "" {
		upstreamSocket = DefaultUpstream
	}
	p := &Proxy{
		socket:   listenSocket,
		upstream: upstreamSocket,
		logf:     func(string, ...any) {},
		done:     make(chan struct{}),
	}
	for _, o := range opts {
		o(p)
	}

	c, err := net.DialTimeout("unix", upstreamSocket, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dockerproxy: upstream: %w", err)
	}
	c.Close()

	if fi, err := os.Lstat(listenSocket); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("dockerproxy: %s exists and is not a socket", listenSocket)
		}
		if err := os.Remove(listenSocket); err != nil {
			return nil, fmt.Errorf("dockerproxy: removing stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", listenSocket)
	if err != nil {
		return nil, fmt.Errorf("dockerproxy: %w", err)
	}
	// The proxy speaks for a root dockerd: its owner and group only, as
	// dockerd's own socket, whatever the umask.
	if err := os.Chmod(listenSocket, 0o660); err != nil {
		ln.Close()
		return nil, fmt.Errorf("dockerproxy: %w", err)
	}
	p.ln = ln

	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return p.dialUpstream(ctx)
		},
		DisableCompression:  true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: "http", Host: "docker"})
			pr.Out.Host = pr.In.Host
		},
		Transport:     p.transport,
		FlushInterval: -1,
		ErrorLog:      log.New(logWriter{p}, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if p.ctx.Err() != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			if r.Context().Err() != nil {
				return // client gone; nobody to answer
			}
			p.logf("upstream error for %s %s: %v", r.Method, r.URL.RequestURI(), err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{
		Handler:     p,
		BaseContext: func(net.Listener) context.Context { return p.ctx },
		ErrorLog:    log.New(logWriter{p}, "", 0),
	}
	go func() {
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.logf("serve: %v", err)
		}
	}()
	return p, nil
}

type logWriter struct{ p *Proxy }

func (l logWriter) Write(b []byte) (int, error) {
	l.p.logf("%s", strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// Socket returns the path of the socket the proxy listens on.
func (p *Proxy) Socket() string { return p.socket }

// Upstream returns the path of the dockerd socket the proxy forwards to.
func (p *Proxy) Upstream() string { return p.upstream }

func (p *Proxy) dialUpstream(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", p.upstream)
}

// Hang starts holding inspect requests for the container idOrName (full id,
// id prefix or name). It resolves the container once by inspecting it
// through the upstream dockerd, and fails if dockerd does not know it.
// Hanging an already hung container only adds idOrName as an alias.
func (p *Proxy) Hang(idOrName string) error {
	info, err := p.resolve(p.ctx, idOrName)
	if err != nil {
		return err
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("dockerproxy: proxy closed")
	}
	alias := strings.TrimPrefix(idOrName, "/")
	for _, h := range p.hung {
		if h.id == info.ID {
			h.aliases = append(h.aliases, alias)
			return nil
		}
	}
	h := &hungContainer{id: info.ID, aliases: []string{alias}, release: make(chan struct{})}
	if n := strings.TrimPrefix(info.Name, "/"); n != "" {
		h.names = append(h.names, n)
	}
	p.hung = append(p.hung, h)
	p.logf("hanging inspects of container %s (name %q)", info.ID, info.Name)
	return nil
}

type containerInfo struct {
	ID   string `json:"Id"`
	Name string `json:"Name"`
}

// resolve inspects idOrName through the upstream dockerd.
func (p *Proxy) resolve(ctx context.Context, idOrName string) (containerInfo, error) {
	var info containerInfo
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	u := "http://docker/containers/" + url.PathEscape(strings.TrimPrefix(idOrName, "/")) + "/json"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return info, err
	}
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		return info, fmt.Errorf("dockerproxy: inspecting %q: %w", idOrName, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		return info, fmt.Errorf("dockerproxy: inspecting %q: %s: %s", idOrName, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, &info); err != nil || info.ID == "" {
		return info, fmt.Errorf("dockerproxy: inspecting %q: unexpected answer %.200q", idOrName, body)
	}
	return info, nil
}

// DelayAfterStart makes every later start of a container whose name
// contains fragment slow to complete, as far as inspects tell: the inspects
// of that container arriving within delay of its start are held until delay
// has passed since the start, then forwarded to dockerd (or dropped, if the
// client gives up first). The start itself is forwarded at once. Held
// inspects show in HeldRequests with the outcome "forwarded after delay".
func (p *Proxy) DelayAfterStart(fragment string, delay time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.slowRule = append(p.slowRule, slowRule{fragment: fragment, delay: delay})
	p.logf("delaying inspects for %v after the start of containers named *%s*", delay, fragment)
}

// noteStart is called with the container reference of a start request,
// before it is forwarded: a container matching a DelayAfterStart rule is
// marked slow from now on.
func (p *Proxy) noteStart(ctx context.Context, ref string) {
	p.mu.Lock()
	rules := append([]slowRule(nil), p.slowRule...)
	p.mu.Unlock()
	if len(rules) == 0 {
		return
	}
	info, err := p.resolve(ctx, ref)
	if err != nil {
		p.logf("start of %s: %v", ref, err)
		return
	}
	name := strings.TrimPrefix(info.Name, "/")
	for _, r := range rules {
		if !strings.Contains(name, r.fragment) {
			continue
		}
		s := &slowContainer{hungContainer: hungContainer{id: info.ID, names: []string{name}, aliases: []string{ref}}, until: time.Now().Add(r.delay)}
		p.mu.Lock()
		p.slow = append(p.slow, s)
		p.mu.Unlock()
		p.logf("container %s (%s) started: its inspects are held until %s", info.ID, name, s.until.Format("15:04:05.000"))
		return
	}
}

func (p *Proxy) lookupSlow(ref string) *slowContainer {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for _, s := range p.slow {
		if now.Before(s.until) && s.matches(ref) {
			return s
		}
	}
	return nil
}

// delay holds an inspect of a slow container until its time. It returns
// true if the request should be forwarded (the client did not give up).
func (p *Proxy) delay(r *http.Request, s *slowContainer) bool {
	rec := &HeldRequest{Method: r.Method, Path: r.URL.RequestURI(), UserAgent: r.UserAgent(), Container: s.id, Start: time.Now(), Outcome: "held"}
	p.mu.Lock()
	p.held++
	p.history = append(p.history, rec)
	p.mu.Unlock()
	p.logf("delaying %s %s from %q until %s", rec.Method, rec.Path, rec.UserAgent, s.until.Format("15:04:05.000"))
	t := time.NewTimer(time.Until(s.until))
	defer t.Stop()
	forward, outcome := false, ""
	select {
	case <-t.C:
		forward, outcome = true, "forwarded after delay"
	case <-r.Context().Done():
		outcome = "client gave up"
		if p.ctx.Err() != nil {
			outcome = "proxy closed"
		}
	}
	p.mu.Lock()
	p.held--
	rec.End, rec.Outcome = time.Now(), outcome
	line := rec.String()
	p.mu.Unlock()
	p.logf("%s", line)
	return forward
}

// Release stops hanging the container idOrName (matched like a request,
// without asking dockerd). Requests held for it at that moment are forwarded
// to dockerd and answered normally, as when a real lock is finally freed.
// Releasing a container that is not hung does nothing.
func (p *Proxy) Release(idOrName string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.hung[:0]
	for _, h := range p.hung {
		if h.matches(idOrName) {
			close(h.release)
			p.logf("released container %s", h.id)
			continue
		}
		kept = append(kept, h)
	}
	p.hung = kept
}

// HungRequests returns how many inspect requests are being held right now.
func (p *Proxy) HungRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// HeldRequests returns every inspect request held so far (including ones
// still pending), oldest first; len(HeldRequests()) is the total count.
func (p *Proxy) HeldRequests() []HeldRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]HeldRequest, len(p.history))
	for i, h := range p.history {
		out[i] = *h
	}
	return out
}

// Close stops listening (removing the socket file), answers held requests
// with 503, aborts streams and hijacked connections, and waits for all
// handlers to return. It is safe to call more than once.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.done
		return p.closeErr
	}
	p.closed = true
	p.mu.Unlock()

	// Every request context derives from p.ctx: held requests answer 503,
	// proxied streams and hijacked pipes are torn down.
	p.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err := p.srv.Shutdown(ctx)
	cancel()
	if err != nil {
		err = p.srv.Close()
	}
	p.handlers.Wait()
	p.transport.CloseIdleConnections()
	p.closeErr = err
	close(p.done)
	return err
}

var versionPrefix = regexp.MustCompile(`^/v[0-9][0-9.]*`)

// apiPath returns the escaped path segments after an optional /vX.Y prefix.
func apiPath(r *http.Request) []string {
	p := r.URL.EscapedPath()
	if loc := versionPrefix.FindStringIndex(p); loc != nil && (len(p) == loc[1] || p[loc[1]] == '/') {
		p = p[loc[1]:]
	}
	return strings.Split(strings.Trim(p, "/"), "/")
}

// inspectRef returns the container reference of a container inspect request.
func inspectRef(r *http.Request, segs []string) (string, bool) {
	if r.Method != http.MethodGet || len(segs) != 3 || segs[0] != "containers" || segs[2] != "json" {
		return "", false
	}
	ref, err := url.PathUnescape(segs[1])
	if err != nil || ref == "" {
		return "", false
	}
	return ref, true
}

// startRef returns the container reference of a container start request.
func startRef(r *http.Request, segs []string) (string, bool) {
	if r.Method != http.MethodPost || len(segs) != 3 || segs[0] != "containers" || segs[2] != "start" {
		return "", false
	}
	ref, err := url.PathUnescape(segs[1])
	if err != nil || ref == "" {
		return "", false
	}
	return ref, true
}

// isList reports whether r lists containers (docker ps).
func isList(r *http.Request, segs []string) bool {
	return r.Method == http.MethodGet && len(segs) == 2 && segs[0] == "containers" && segs[1] == "json"
}

func isHijack(r *http.Request, segs []string) bool {
	if r.Method != http.MethodPost {
		return false
	}
	if len(segs) == 3 && ((segs[0] == "containers" && segs[2] == "attach") || (segs[0] == "exec" && segs[2] == "start")) {
		return true
	}
	return headerHasToken(r.Header, "Connection", "upgrade")
}

func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "dockerproxy closed", http.StatusServiceUnavailable)
		return
	}
	p.handlers.Add(1)
	p.mu.Unlock()
	defer p.handlers.Done()

	// httputil.ReverseProxy panics with http.ErrAbortHandler when copying a
	// response fails midway (typically the client left mid-stream). Recover
	// it here and abort the connection, so the client cannot mistake a cut
	// stream for a complete one and the proxy keeps serving.
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			p.logf("aborted %s %s mid-response (client or upstream went away)", r.Method, r.URL.RequestURI())
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
		}
	}()

	segs := apiPath(r)
	if ref, ok := inspectRef(r, segs); ok {
		if h := p.lookup(ref); h != nil && !p.hold(w, r, h) {
			return
		}
		if s := p.lookupSlow(ref); s != nil && !p.delay(r, s) {
			if p.ctx.Err() != nil {
				http.Error(w, "dockerproxy closed", http.StatusServiceUnavailable)
			}
			return
		}
	}
	if ref, ok := startRef(r, segs); ok {
		p.noteStart(r.Context(), ref)
	}
	if p.listLocking && isList(r, segs) {
		p.serveLockedList(w, r)
		return
	}
	if isHijack(r, segs) {
		p.serveHijack(w, r)
		return
	}
	p.rp.ServeHTTP(w, r)
}

func (p *Proxy) lookup(ref string) *hungContainer {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.hung {
		if h.matches(ref) {
			return h
		}
	}
	return nil
}

// hold keeps an inspect request of a hung container pending. It returns true
// if the request should be forwarded (the container was released).
func (p *Proxy) hold(w http.ResponseWriter, r *http.Request, h *hungContainer) bool {
	rec := &HeldRequest{
		Method:    r.Method,
		Path:      r.URL.RequestURI(),
		UserAgent: r.UserAgent(),
		Container: h.id,
		Start:     time.Now(),
		Outcome:   "held",
	}
	p.mu.Lock()
	p.held++
	p.history = append(p.history, rec)
	p.mu.Unlock()
	p.logf("holding %s %s from %q", rec.Method, rec.Path, rec.UserAgent)

	forward := false
	outcome := ""
	select {
	case <-h.release:
		forward, outcome = true, "released"
	case <-r.Context().Done():
		if p.ctx.Err() != nil {
			outcome = "proxy closed"
		} else {
			outcome = "client gave up"
		}
	}

	p.mu.Lock()
	p.held--
	rec.End, rec.Outcome = time.Now(), outcome
	line := rec.String()
	p.mu.Unlock()
	p.logf("%s", line)

	if outcome == "proxy closed" {
		http.Error(w, "dockerproxy closed", http.StatusServiceUnavailable)
	}
	return forward
}

var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// serveHijack forwards a request that dockerd may answer by taking over the
// connection. The request is written to a fresh upstream connection; if the
// answer is a hijack (101, or a raw/multiplexed stream with no length), the
// client connection is hijacked too and bytes are piped both ways until
// dockerd ends the session. Otherwise the answer is relayed normally.
func (p *Proxy) serveHijack(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	up, err := p.dialUpstream(ctx)
	if err != nil {
		p.logf("upstream dial for %s %s: %v", r.Method, r.URL.RequestURI(), err)
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer up.Close()
	stop := context.AfterFunc(ctx, func() { up.Close() })
	defer stop()

	out := r.Clone(ctx)
	out.Header.Del("Proxy-Connection")
	out.RequestURI = ""
	if err := out.Write(up); err != nil {
		p.logf("writing %s %s upstream: %v", r.Method, r.URL.RequestURI(), err)
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	ubr := bufio.NewReader(up)
	resp, err := http.ReadResponse(ubr, out)
	if err != nil {
		if ctx.Err() == nil {
			p.logf("reading answer to %s %s: %v", r.Method, r.URL.RequestURI(), err)
			w.WriteHeader(http.StatusBadGateway)
		}
		return
	}
	ct := resp.Header.Get("Content-Type")
	raw := strings.HasPrefix(ct, "application/vnd.docker.raw-stream") ||
		strings.HasPrefix(ct, "application/vnd.docker.multiplexed-stream")
	hijacked := resp.StatusCode == http.StatusSwitchingProtocols ||
		(raw && resp.ContentLength < 0 && len(resp.TransferEncoding) == 0)

	if !hijacked {
		defer resp.Body.Close()
		for _, k := range hopHeaders {
			resp.Header.Del(k)
		}
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		rc := http.NewResponseController(w)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				rc.Flush()
			}
			if err != nil {
				if err != io.EOF {
					panic(http.ErrAbortHandler)
				}
				return
			}
		}
	}

	client, cbr, err := http.NewResponseController(w).Hijack()
	if err != nil {
		p.logf("hijacking client for %s %s: %v", r.Method, r.URL.RequestURI(), err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	defer client.Close()
	stopClient := context.AfterFunc(ctx, func() { client.Close() })
	defer stopClient()

	// Response head exactly as dockerd sent it (status, headers).
	fmt.Fprintf(cbr.Writer, "HTTP/%d.%d %s\r\n", resp.ProtoMajor, resp.ProtoMinor, resp.Status)
	resp.Header.Write(cbr.Writer)
	cbr.Writer.WriteString("\r\n")
	if err := cbr.Writer.Flush(); err != nil {
		return
	}

	// client -> dockerd (stdin), including bytes the server already buffered.
	inDone := make(chan struct{})
	go func() {
		defer close(inDone)
		io.Copy(up, io.MultiReader(io.LimitReader(cbr.Reader, int64(cbr.Reader.Buffered())), client))
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}()
	// dockerd -> client (output); when dockerd ends the session, so do we.
	io.Copy(client, ubr)
	if cw, ok := client.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	client.Close()
	up.Close()
	<-inDone
}

// serveLockedList answers a container list as pre-17.07 engines did
// (WithListLocking): dockerd's answer is held back until every container
// in it has been "locked", that is inspected through the fault injection
// (held while hung, delayed while slow) and through dockerd. A container
// that is gone by then is skipped, as a removed container was.
func (p *Proxy) serveLockedList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	out := r.Clone(ctx)
	out.RequestURI = ""
	out.URL = &url.URL{Scheme: "http", Host: "docker", Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		if ctx.Err() == nil {
			p.logf("upstream error for %s %s: %v", r.Method, r.URL.RequestURI(), err)
			w.WriteHeader(http.StatusBadGateway)
		}
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		if ctx.Err() == nil {
			w.WriteHeader(http.StatusBadGateway)
		}
		return
	}
	var listed []struct {
		ID string `json:"Id"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &listed); err != nil {
			p.logf("list %s: unexpected answer: %v", r.URL.RequestURI(), err)
		}
	}
	for _, c := range listed {
		if h := p.lookup(c.ID); h != nil && !p.hold(w, r, h) {
			return
		}
		if s := p.lookupSlow(c.ID); s != nil && !p.delay(r, s) {
			if p.ctx.Err() != nil {
				http.Error(w, "dockerproxy closed", http.StatusServiceUnavailable)
			}
			return
		}
		// The lock a real inspect takes; a container removed since the
		// list was taken answers 404 and is skipped.
		if _, err := p.resolve(ctx, c.ID); err != nil && ctx.Err() != nil {
			return
		}
	}
	for _, k := range hopHeaders {
		resp.Header.Del(k)
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
}
