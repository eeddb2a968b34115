// Tests for the deadline on cadvisor's docker inspects (patch
// "cadvisor: put a deadline on docker inspect ..."). A fake Docker API on a
// unix socket never answers the inspect of the "hung" containers, as docker
// does while a container's lock is held; every inspect must give up after
// the inspect timeout (and close its request), a hung container must be ignored
// for this round rather than left to the raw factory, a hung network-mode
// container must not fail the handler of the containers sharing its network,
// and healthy containers must still be handled.
//
// Shared by every release's fixes (series inspect-deadline-tests); what
// differs between releases' cadvisor is in the fixes series'
// inspect_release_test.go.

package docker

import (
	"encoding/json"
	"fmt"
	"io/ioutil"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/cadvisor/container"
)

// hung returns the id of a container whose inspect never answers. Each test
// uses its own: after a timeout, inspects of that id are backed off for the
// rest of the test binary.
func hung(n int) string { return fmt.Sprintf("dead%060d", n) }

var (
	healthyID = strings.Repeat("b", 64) // running, has its own IP
	podID     = strings.Repeat("d", 64) // running, in healthyID's network namespace
)

// testInspectTimeout replaces the inspect timeout; mustReturnWithin is how long
// a patched call may take at most (generous, for a loaded machine).
const (
	testInspectTimeout = 200 * time.Millisecond
	mustReturnWithin   = 3 * time.Second
)

func containerJSON(id, name, networkMode, ip string) map[string]interface{} {
	return map[string]interface{}{
		"Id":              id,
		"Name":            "/" + name,
		"Created":         "2017-08-31T08:56:23.123456789Z",
		"State":           map[string]interface{}{"Running": true, "Pid": 4242},
		"Config":          map[string]interface{}{"Image": "busybox", "Labels": map[string]string{}},
		"HostConfig":      map[string]interface{}{"NetworkMode": networkMode},
		"NetworkSettings": map[string]interface{}{"IPAddress": ip},
		"GraphDriver":     map[string]interface{}{"Name": "overlay2", "Data": map[string]string{}},
	}
}

// fakeDocker is a minimal Docker API on a unix socket.
// GET [/vX.Y]/containers/<hung id>/json blocks until the client gives up on
// it (counted in abandoned) or the fake is released.
type fakeDocker struct {
	client     *testDockerClient
	containers map[string]interface{}
	release    chan struct{}
	releaseAll sync.Once

	mu        sync.Mutex
	sent      map[string]int // inspect requests received, by id
	abandoned map[string]int // of those, the ones the client gave up on
}

func startFakeDocker(t *testing.T) *fakeDocker {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeDocker{
		containers: map[string]interface{}{
			healthyID: containerJSON(healthyID, "healthy", "default", "10.1.0.2"),
			podID:     containerJSON(podID, "app", "container:"+healthyID, ""),
		},
		release:   make(chan struct{}),
		sent:      map[string]int{},
		abandoned: map[string]int{},
	}
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/v1.") { // drop the API version prefix
			p = p[strings.Index(p[1:], "/")+1:]
		}
		switch {
		case p == "/_ping":
			fmt.Fprint(w, "OK")
		case p == "/version":
			json.NewEncoder(w).Encode(map[string]string{"Version": "17.03.2-ce", "ApiVersion": "1.27"})
		case strings.HasPrefix(p, "/containers/") && strings.HasSuffix(p, "/json"):
			id := strings.TrimSuffix(strings.TrimPrefix(p, "/containers/"), "/json")
			f.mu.Lock()
			f.sent[id]++
			f.mu.Unlock()
			if strings.HasPrefix(id, "dead") {
				select { // docker waiting for the container's lock
				case <-f.release:
				case <-r.Context().Done():
					f.mu.Lock()
					f.abandoned[id]++
					f.mu.Unlock()
					return
				}
			}
			f.mu.Lock()
			c, ok := f.containers[id]
			f.mu.Unlock()
			if ok {
				json.NewEncoder(w).Encode(c)
				return
			}
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"message": "No such container: " + id})
		default:
			http.NotFound(w, r)
		}
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	f.client, err = newTestDockerClient("unix://"+sock, "1.24", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	restore := setInspectTimeout(testInspectTimeout)
	t.Cleanup(func() {
		f.unblock()
		srv.Close()
		restore()
	})
	return f
}

// addContainer makes the fake know one more container.
func (f *fakeDocker) addContainer(id string, c map[string]interface{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.containers[id] = c
}

// unblock answers every held and future inspect of the hung containers.
func (f *fakeDocker) unblock() { f.releaseAll.Do(func() { close(f.release) }) }

// requests returns how many inspects of id reached the fake and how many of
// those the client gave up on (closed).
func (f *fakeDocker) requests(id string) (sent, abandoned int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent[id], f.abandoned[id]
}

// expectAbandoned fails the test unless every inspect of id that reached
// the fake was closed by the client, i.e. the deadline cancelled it rather
// than leaving it open in dockerd.
func (f *fakeDocker) expectAbandoned(t *testing.T, id string) {
	t.Helper()
	for deadline := time.Now().Add(mustReturnWithin); ; time.Sleep(10 * time.Millisecond) {
		sent, abandoned := f.requests(id)
		if sent > 0 && sent == abandoned {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %.12s: %d inspects sent, %d cancelled by the client: the timed-out request is still open on the docker socket", id, sent, abandoned)
		}
	}
}

// within runs f on its own goroutine (f must not touch t) and returns how
// long it took. If f has not returned after mustReturnWithin, the fake
// answers the held inspects so that f ends, and only once f has ended (and
// stopped reading the package variables the test changed) does the test fail.
func within(t *testing.T, fd *fakeDocker, what string, f func()) time.Duration {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(mustReturnWithin):
	}
	fd.unblock()
	select {
	case <-done:
	case <-time.After(mustReturnWithin):
		t.Errorf("%s did not end even after the fake docker answered", what)
	}
	t.Fatalf("%s still blocked after %v; inspect deadline is %v", what, mustReturnWithin, testInspectTimeout)
	return 0
}

// A timed-out inspect says nothing about whether docker knows the container:
// the docker factory must claim it without accepting it (the manager ignores
// it and tries again at its next housekeeping), not give it to the next
// factory (raw) for good.
func TestCanHandleAndAcceptHungInspect(t *testing.T) {
	fd := startFakeDocker(t)
	f := &dockerFactory{client: fd.client}
	id := hung(1)

	var canHandle, canAccept bool
	var err error
	took := within(t, fd, "CanHandleAndAccept(hung container)", func() {
		canHandle, canAccept, err = f.CanHandleAndAccept("/kubepods/pod1/" + id)
	})
	if !canHandle || canAccept || err == nil {
		t.Fatalf("hung container: got canHandle=%v canAccept=%v err=%v; want true, false and an error (ignored this round, not left to the raw factory)", canHandle, canAccept, err)
	}
	if !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("hung container: error %q does not say the deadline was exceeded", err)
	}
	fd.expectAbandoned(t, id)
	t.Logf("hung container ignored after %v: %v", took, err)

	// The other containers are still accepted by the docker factory.
	canHandle, canAccept, err = f.CanHandleAndAccept("/kubepods/pod2/" + healthyID)
	if !canHandle || !canAccept || err != nil {
		t.Fatalf("healthy container: got %v, %v, %v; want true, true, nil", canHandle, canAccept, err)
	}
}

// rawFactory stands in for cadvisor's raw factory, which accepts every
// cgroup; it counts the containers it was given (its NewContainerHandler,
// whose signature differs between releases, is in inspect_release_test.go).
type rawFactory struct{ handled []string }

func (r *rawFactory) String() string                                { return "raw" }
func (r *rawFactory) DebugInfo() map[string][]string                { return nil }
func (r *rawFactory) CanHandleAndAccept(string) (bool, bool, error) { return true, true, nil }

// Through cadvisor's factory loop, as the manager creates containers: the
// hung container gets no handler this round (the manager's createContainer
// then leaves it out of its containers, so the next housekeeping's
// detectSubcontainers offers it again), and the raw factory never sees it.
func TestHungContainerIsNotLeftToRawFactory(t *testing.T) {
	fd := startFakeDocker(t)
	raw := &rawFactory{}
	container.ClearContainerHandlerFactories()
	t.Cleanup(container.ClearContainerHandlerFactories)
	container.RegisterContainerHandlerFactory(&dockerFactory{client: fd.client}, []watchSource{rawWatch})
	container.RegisterContainerHandlerFactory(raw, []watchSource{rawWatch})
	name := "/kubepods/pod1/" + hung(2)

	var h container.ContainerHandler
	var accept bool
	var err error
	within(t, fd, "NewContainerHandler(hung container)", func() { h, accept, err = newContainerHandler(name) })
	if h != nil || accept || err != nil || len(raw.handled) != 0 {
		t.Fatalf("hung container: got handler %v, accept %v, err %v, raw factory given %q; want no handler, not accepted, no error and nothing for the raw factory (ignored this round)", h, accept, err, raw.handled)
	}
}

func TestNewDockerContainerHandlerHungInspect(t *testing.T) {
	fd := startFakeDocker(t)
	own, network := hung(3), hung(4)
	joinerID := strings.Repeat("c", 64) // running, in the hung container's network namespace
	fd.addContainer(joinerID, containerJSON(joinerID, "joiner", "container:"+network, ""))
	storageDir := t.TempDir()
	for _, id := range []string{own, healthyID, joinerID, podID} {
		d := filepath.Join(storageDir, "image", "overlay2", "layerdb", "mounts", id)
		if err := os.MkdirAll(d, 0755); err != nil {
			t.Fatal(err)
		}
		if err := ioutil.WriteFile(filepath.Join(d, "mount-id"), []byte("rw-"+id[:8]), 0644); err != nil {
			t.Fatal(err)
		}
	}
	newHandler := func(id string) (container.ContainerHandler, error) {
		return newDockerContainerHandler(fd.client, "/kubepods/pod/"+id, nil, nil, overlay2StorageDriver,
			storageDir, testCgroupSubsystems, true, nil, []int{17, 3, 2},
			handlerMetrics, "", nil, nil)
	}

	t.Run("own inspect hangs", func(t *testing.T) {
		var err error
		within(t, fd, "newDockerContainerHandler(hung container)", func() { _, err = newHandler(own) })
		if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
			t.Errorf("got error %v, want a deadline error", err)
		}
		fd.expectAbandoned(t, own)
	})

	// The container answers, but the one whose network namespace it joins
	// ("container:<id>", looked up for its IP: the pod's pause container)
	// does not. The IP is informational: the handler is made without it.
	t.Run("network-mode container hangs", func(t *testing.T) {
		var h container.ContainerHandler
		var err error
		took := within(t, fd, "newDockerContainerHandler(container joining the hung one's network)", func() { h, err = newHandler(joinerID) })
		if err != nil {
			t.Fatalf("got error %v; want a handler without an IP", err)
		}
		if ip := h.(*dockerContainerHandler).ipAddress; ip != "" {
			t.Errorf("IP %q, want none", ip)
		}
		fd.expectAbandoned(t, network)
		t.Logf("handler made without an IP after %v", took)
	})

	// Healthy containers still get a docker handler, their IP looked up
	// through their network-mode container.
	t.Run("healthy", func(t *testing.T) {
		h, err := newHandler(podID)
		if err != nil {
			t.Fatalf("healthy container: %v", err)
		}
		if ip := h.(*dockerContainerHandler).ipAddress; ip != "10.1.0.2" {
			t.Errorf("healthy container: IP %q, want 10.1.0.2 (from its network-mode container)", ip)
		}
	})
}
