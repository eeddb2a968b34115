package rehearsal

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Prober sends requests to the workloads' Service and host ports while
// the kubelets are switched, and counts the ones that fail: a switch that
// keeps every container still must not drop traffic.
type Prober struct {
	// Targets are http URLs (node IP + NodePort or host port).
	Targets  []string
	Interval time.Duration

	mu       sync.Mutex
	requests int
	failures map[string]int
	first    map[string]string // first failure per target
}

// Run probes until ctx ends.
func (p *Prober) Run(ctx context.Context) {
	p.failures, p.first = map[string]int{}, map[string]string{}
	client := &http.Client{Timeout: 2 * time.Second}
	var wg sync.WaitGroup
	for _, t := range p.Targets {
		wg.Add(1)
		go func(url string) {
			defer wg.Done()
			tick := time.NewTicker(p.Interval)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				err := get(ctx, client, url)
				if ctx.Err() != nil {
					return // cut short by the end of probing, not a failure
				}
				p.mu.Lock()
				p.requests++
				if err != nil {
					p.failures[url]++
					if p.first[url] == "" {
						p.first[url] = fmt.Sprintf("%s: %v", time.Now().Format(time.TimeOnly), err)
					}
				}
				p.mu.Unlock()
			}
		}(t)
	}
	wg.Wait()
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
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}

// Counts returns the requests sent, those that failed, and per failing
// target its count and first failure.
func (p *Prober) Counts() (requests, failed int, detail []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for url, n := range p.failures {
		failed += n
		detail = append(detail, fmt.Sprintf("%s: %d failed, first %s", url, n, p.first[url]))
	}
	sort.Strings(detail)
	return p.requests, failed, detail
}

// readiness samples the pods' Ready condition from the API and sums the
// seconds each pod of the baseline was seen not Ready.
type readiness struct {
	kubectl  Kubectl
	baseline map[string]PodState
	interval time.Duration

	mu       sync.Mutex
	notReady map[string]float64
	errors   int
}

func (r *readiness) run(ctx context.Context) {
	r.notReady = map[string]float64{}
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.interval):
		}
		pods, _, err := r.kubectl.Pods(ctx)
		now := time.Now()
		dt := now.Sub(last).Seconds()
		last = now
		r.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				r.errors++
			}
		} else {
			for key := range r.baseline {
				if p, ok := pods[key]; !ok || !p.Ready {
					r.notReady[key] += dt
				}
			}
		}
		r.mu.Unlock()
	}
}

// seconds returns the per-pod not-Ready seconds and their sum.
func (r *readiness) seconds() (map[string]float64, float64) {
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
