package verdict

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"sync"
	"time"

	"kubelet-toolchain/scripts/internal/cluster/nodes"
)

// Prober sends requests to the workloads' Services and host ports while
// the kubelets are switched, and counts the ones that fail: a switch that
// keeps every container must not drop traffic. A target reached from the
// machine that answers HTTP is probed with GET / (any answer below 500 is
// the workload serving), else by opening a TCP connection; a cluster IP is
// reached from inside a node, by opening a TCP connection there.
type Prober struct {
	Targets  []Target
	Interval time.Duration
	Log      func(string, ...any)

	mu       sync.Mutex
	requests int
	failures map[string]int
	first    map[string]string // first failure per target
	// checkers are the in-node TCP check processes, one per node, ended
	// by Run.
	checkers map[string]*tcpChecker
}

// Target is host:port, reached from the machine or, with Via, from
// inside that node.
type Target struct {
	Addr string
	Via  *nodes.Node
}

func (t Target) String() string {
	if t.Via != nil {
		return t.Addr + " (from " + t.Via.Name + ")"
	}
	return t.Addr
}

// ProbeFunc sends one request to a target.
type ProbeFunc func(ctx context.Context) error

// Modes decides, before the switches, how each target is probed; targets
// nothing answers on are left out (with a line in the log): their
// workload was not serving before the switch either.
func (p *Prober) Modes(ctx context.Context) map[string]ProbeFunc {
	// A new connection per request: a kept-alive one would ride out a
	// switch that breaks new connections (NAT rules, host ports).
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	out := map[string]ProbeFunc{}
	for _, t := range p.Targets {
		t := t
		if t.Via != nil {
			host, port, _ := net.SplitHostPort(t.Addr)
			if p.checkers == nil {
				p.checkers = map[string]*tcpChecker{}
			}
			checker := p.checkers[t.Via.Name]
			if checker == nil {
				via := t.Via
				checker = newTCPChecker(func() *exec.Cmd {
					c := via.ExecCmd("bash", "-c", tcpCheckScript)
					return exec.Command(c.Name, c.Args...)
				})
				p.checkers[t.Via.Name] = checker
			}
			inNode := func(ctx context.Context) error { return checker.check(ctx, host, port) }
			if inNode(ctx) == nil {
				out[t.String()] = inNode
			} else {
				p.Log("prober: nothing answers on %s before the switches: not probed", t)
			}
			continue
		}
		httpProbe := func(ctx context.Context) error { return get(ctx, client, "http://"+t.Addr+"/") }
		tcpProbe := func(ctx context.Context) error {
			c, err := (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "tcp", t.Addr)
			if err == nil {
				c.Close()
			}
			return err
		}
		switch {
		case httpProbe(ctx) == nil:
			out[t.String()] = httpProbe
		case tcpProbe(ctx) == nil:
			out[t.String()] = tcpProbe
		default:
			p.Log("prober: nothing answers on %s before the switches: not probed", t)
		}
	}
	return out
}

// Run probes until ctx ends.
func (p *Prober) Run(ctx context.Context, modes map[string]ProbeFunc) {
	p.failures, p.first = map[string]int{}, map[string]string{}
	var wg sync.WaitGroup
	for t, probe := range modes {
		wg.Add(1)
		go func(t string, probe ProbeFunc) {
			defer wg.Done()
			tick := time.NewTicker(p.Interval)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				err := probe(ctx)
				if ctx.Err() != nil {
					return // cut short by the end of probing, not a failure
				}
				p.mu.Lock()
				p.requests++
				if err != nil {
					p.failures[t]++
					if p.first[t] == "" {
						p.first[t] = fmt.Sprintf("%s: %v", time.Now().Format(time.TimeOnly), err)
					}
				}
				p.mu.Unlock()
			}
		}(t, probe)
	}
	wg.Wait()
	for _, c := range p.checkers {
		c.Close()
	}
}

func get(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}

// Counts returns the requests sent, those that failed, and per failing
// target its count and first failure.
func (p *Prober) Counts() (requests, failed int, detail []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for t, n := range p.failures {
		failed += n
		detail = append(detail, fmt.Sprintf("%s: %d failed, first %s", t, n, p.first[t]))
	}
	sort.Strings(detail)
	return p.requests, failed, detail
}

// Readiness samples the pods' Ready condition from the API and sums the
// seconds each pod of the baseline was seen not Ready.
type Readiness struct {
	// Pods lists the cluster's pods (as the rehearsal's kubectl does).
	Pods     func(ctx context.Context) (map[string]PodState, []byte, error)
	Baseline map[string]PodState
	Interval time.Duration

	mu       sync.Mutex
	notReady map[string]float64
	errors   int
}

// Run samples until ctx is done.
func (r *Readiness) Run(ctx context.Context) {
	r.notReady = map[string]float64{}
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.Interval):
		}
		pods, _, err := r.Pods(ctx)
		now := time.Now()
		dt := now.Sub(last).Seconds()
		last = now
		r.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				r.errors++
			}
		} else {
			for key, b := range r.Baseline {
				if b.Completed() {
					continue
				}
				if p, ok := pods[key]; !ok || !p.Ready {
					r.notReady[key] += dt
				}
			}
		}
		r.mu.Unlock()
	}
}

// Errors is how many API reads failed while sampling: moments the
// not-Ready seconds do not cover.
func (r *Readiness) Errors() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errors
}

// Seconds returns the per-pod not-Ready seconds and their sum.
func (r *Readiness) Seconds() (map[string]float64, float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum := 0.0
	out := map[string]float64{}
	for k, v := range r.notReady {
		out[k] = v
		sum += v
	}
	return out, sum
}
