// Package staticuid chooses the UID a patched kubelet gives a static pod
// that has no metadata.uid, so that switching a node's kubelet keeps the
// pod whichever kubelet started it.
//
// applyDefaults derives such a pod's UID from a go-spew dump of the
// decoded pod, and the dump depends on the release (its types) and on the
// Go release that built the kubelet (runtime types such as time.Time).
// A node may run the pod under any of the known derivations: the official
// binary's, the same release built by a newer Go (this toolchain's earlier
// builds, distribution rebuilds), or the new release's own. The release's
// patch lists the derivations it knows, baseline first; the kubelet keeps
// the one whose sandbox the node already has, and derives the baseline's
// (the official binary's) for a pod that runs nowhere yet.
package staticuid

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// baseline is the release whose derivation comes first (versions.yaml
// uidBaseline, set with -X); empty: the release's own.
var baseline = ""

// Baseline returns the release whose derivation a pod that runs nowhere
// yet gets ("" when the release derives its own).
func Baseline() string { return baseline }

// Derivation is one known way a kubelet derived a static pod's UID.
type Derivation struct {
	// Name says whose derivation it is, e.g. "official 1.7 (go1.8.3)".
	Name string
	UID  string
}

// Sandbox is a pod sandbox the container runtime held when the kubelet
// started, from its labels (io.kubernetes.pod.uid, .name, .namespace).
type Sandbox struct {
	UID, Name, Namespace string
	Running              bool
	// Created orders sandboxes of the same pod (Unix seconds).
	Created int64
}

var (
	mu        sync.Mutex
	sandboxes map[string][]Sandbox // namespace/name -> newest first
)

// Record keeps the node's sandboxes, listed once before the static pod
// sources start: a pod the kubelet keeps is then derived the same way on
// every re-read of its manifest for the life of the process.
func Record(all []Sandbox) {
	m := map[string][]Sandbox{}
	for _, s := range all {
		k := s.Namespace + "/" + s.Name
		m[k] = append(m[k], s)
	}
	for _, list := range m {
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].Running != list[j].Running {
				return list[i].Running
			}
			return list[i].Created > list[j].Created
		})
	}
	mu.Lock()
	sandboxes = m
	mu.Unlock()
}

// Choose returns, for the static pod namespace/name (its final name, with
// the node name appended), the derivation whose UID a sandbox of that pod
// carries (a running sandbox first, then the newest), else ds[0]. running
// says whether a sandbox matched.
func Choose(namespace, name string, ds []Derivation) (d Derivation, running bool) {
	mu.Lock()
	list := sandboxes[namespace+"/"+name]
	mu.Unlock()
	for _, s := range list {
		for _, d := range ds {
			if d.UID == s.UID {
				return d, true
			}
		}
	}
	return ds[0], false
}

// Dedup drops derivations whose UID an earlier one already gives (the
// derivations agree for many pods), keeping the first name.
func Dedup(ds []Derivation) []Derivation {
	seen := map[string]bool{}
	out := ds[:0:0]
	for _, d := range ds {
		if !seen[d.UID] {
			seen[d.UID] = true
			out = append(out, d)
		}
	}
	return out
}

// UIDs lists the derivations' UIDs in order.
func UIDs(ds []Derivation) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.UID
	}
	return out
}

// Container is a container as the runtime lists it.
type Container struct {
	Labels  map[string]string
	State   string
	Created int64
}

// dockershim's labels on a pod sandbox container.
const (
	typeLabel      = "io.kubernetes.docker.type"
	sandboxType    = "podsandbox"
	uidLabel       = "io.kubernetes.pod.uid"
	nameLabel      = "io.kubernetes.pod.name"
	namespaceLabel = "io.kubernetes.pod.namespace"
)

// RecordContainers records the pod sandboxes among the containers list
// returns. list gets at most timeout: a hung runtime must not hold up the
// kubelet's start (every static pod then gets ds[0], and the error says
// so for the caller to log).
func RecordContainers(list func() ([]Container, error), timeout time.Duration) (int, error) {
	type result struct {
		cs  []Container
		err error
	}
	done := make(chan result, 1)
	go func() {
		cs, err := list()
		done <- result{cs, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(timeout):
		r.err = fmt.Errorf("listing pod sandboxes took more than %v", timeout)
	}
	if r.err != nil {
		Record(nil)
		return 0, r.err
	}
	var all []Sandbox
	for _, c := range r.cs {
		if c.Labels[typeLabel] != sandboxType || c.Labels[uidLabel] == "" {
			continue
		}
		all = append(all, Sandbox{UID: c.Labels[uidLabel], Name: c.Labels[nameLabel], Namespace: c.Labels[namespaceLabel],
			Running: c.State == "running", Created: c.Created})
	}
	Record(all)
	return len(all), nil
}
