// Tests for which dockershim paths get the short inspect deadline (patch
// "dockershim: ..."): the status paths (ContainerStatus, PodSandboxStatus)
// inspect with InspectContainerForStatus, the creation paths keep
// InspectContainer and its request timeout, and a status inspect that timed
// out is not sent again at once.
//
// Shared by every release's fixes (series inspect-deadline-tests); what
// differs between releases is in the fixes series' inspect_release_test.go.

package dockershim

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestInspectsOfStatusAndCreationPaths(t *testing.T) {
	ds, fakeDocker, _ := newTestDockerService()
	const id = "c0ffee"
	setRunningContainer(fakeDocker, id, "k8s_app_pod_ns_uid_0")
	for _, c := range []struct {
		what  string
		call  func()
		calls []string
	}{
		// The relist and pod syncs: a short deadline.
		{"ContainerStatus", func() { containerStatus(ds, id) }, []string{"inspect_container_for_status", "inspect_image"}},
		{"PodSandboxStatus", func() { podSandboxStatus(ds, id) }, []string{"inspect_container_for_status"}},
		// StartContainer's log symlink, before kuberuntime runs PostStart:
		// the request timeout.
		{"StartContainer", func() { startContainer(ds, id) }, []string{"start", "inspect_container"}},
	} {
		fakeDocker.ClearCalls()
		c.call()
		if err := fakeDocker.AssertCalls(c.calls); err != nil {
			t.Errorf("%s: %v", c.what, err)
		}
	}
}

// hungDocker is a minimal Docker API on a unix socket that never answers the
// inspect of hungID (as docker does while the container's lock is held) and
// counts those inspects.
type hungDocker struct {
	endpoint   string
	release    chan struct{}
	releaseAll sync.Once
	mu         sync.Mutex
	sent       int
}

const hungID = "hung0000000000000000000000000000000000000000000000000000000000000"

func startHungDocker(t *testing.T) *hungDocker {
	h := &hungDocker{release: make(chan struct{})}
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/v1.") { // drop the API version prefix
			p = p[strings.Index(p[1:], "/")+1:]
		}
		switch p {
		case "/_ping":
			fmt.Fprint(w, "OK")
		case "/version":
			json.NewEncoder(w).Encode(map[string]string{"Version": "17.03.2-ce", "ApiVersion": "1.27"})
		case "/containers/" + hungID + "/json":
			h.mu.Lock()
			h.sent++
			h.mu.Unlock()
			select {
			case <-h.release:
			case <-r.Context().Done():
			}
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"message": "not found: " + p})
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() {
		h.unblock()
		srv.Close()
	})
	h.endpoint = "unix://" + sock
	return h
}

// unblock answers every held and future inspect of hungID.
func (h *hungDocker) unblock() { h.releaseAll.Do(func() { close(h.release) }) }

func (h *hungDocker) inspects() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sent
}

// Every PLEG relist asks for the status of a pod whose status failed; each
// ContainerStatus of a hung container used to wait out the deadline and
// leave one more abandoned inspect in dockerd. After a timeout, the next
// ContainerStatus must fail at once without asking docker.
func TestContainerStatusBacksOffAfterTimeout(t *testing.T) {
	// The request timeout caps the inspect deadline, so it is the deadline
	// here.
	const requestTimeout = 300 * time.Millisecond
	h := startHungDocker(t)
	ds := &dockerService{client: connectToDocker(h.endpoint, requestTimeout)}

	status := func(what string) (error, time.Duration) {
		errc := make(chan error, 1)
		start := time.Now()
		go func() { errc <- containerStatus(ds, hungID) }()
		select {
		case err := <-errc:
			return err, time.Since(start)
		case <-time.After(10 * requestTimeout):
		}
		// Fail only once the call has ended.
		h.unblock()
		<-errc
		t.Fatalf("%s: ContainerStatus(hung) still blocked after %v", what, 10*requestTimeout)
		return nil, 0
	}
	err, took := status("first")
	if err == nil {
		t.Fatalf("first ContainerStatus(hung) succeeded")
	}
	t.Logf("first ContainerStatus(hung): %v after %v", err, took.Round(time.Millisecond))
	err, took = status("second")
	t.Logf("second ContainerStatus(hung): %v after %v", err, took.Round(time.Millisecond))
	if err == nil {
		t.Fatalf("second ContainerStatus(hung) succeeded")
	}
	if took > requestTimeout/2 {
		t.Errorf("second ContainerStatus(hung) took %v; right after a timeout it must fail at once", took.Round(time.Millisecond))
	}
	if n := h.inspects(); n != 1 {
		t.Errorf("%d inspects of the hung container reached docker; want 1 (the second must not be sent)", n)
	}
}
