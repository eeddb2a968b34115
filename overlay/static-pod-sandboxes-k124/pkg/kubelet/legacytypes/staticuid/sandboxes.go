package staticuid

import (
	"fmt"
	"time"
)

// This file is laid in by overlay static-pod-sandboxes-k124 only (the
// kubelets that ask a CRI runtime): the builds that link the rest of
// the package keep their bytes.

// RecordSandboxes records the pod sandboxes list returns, for a kubelet
// that asks its CRI runtime (ListPodSandbox: 1.24 has no Docker client of
// its own), within timeout as RecordContainers. Sandboxes without a UID
// (dockershim's, known only from a checkpoint) are left out.
func RecordSandboxes(list func() ([]Sandbox, error), timeout time.Duration) (int, error) {
	type result struct {
		ss  []Sandbox
		err error
	}
	done := make(chan result, 1)
	go func() {
		ss, err := list()
		done <- result{ss, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(timeout):
		r.err = fmt.Errorf("listing pod sandboxes took more than %v", timeout)
	}
	var all []Sandbox
	for _, s := range r.ss {
		if r.err == nil && s.UID != "" {
			all = append(all, s)
		}
	}
	Record(all)
	return len(all), r.err
}
