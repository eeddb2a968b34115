// Tests for the short deadline on status inspects (patch "dockershim: ...").
// A fake Docker API on a unix socket never answers the inspect of one
// container, as docker does while a container's lock is held, and answers
// the inspects of another container and an image only late. With a long
// request timeout (the 2-minute one in production) the status inspect
// (InspectContainerForStatus) must give up after defaultInspectTimeout with
// the usual operation timeout error, then back off; every other inspect --
// InspectContainer on the creation paths (StartContainer's log symlink,
// RunPodSandbox's resolv.conf) and the image inspects -- must keep the
// request timeout and get its late answer.
//
// Shared by every release's fixes (series inspect-deadline-tests); what
// differs between releases is in the fixes series' inspect_release_test.go.

package libdocker

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	hungContainerID    = "hung0000000000000000000000000000000000000000000000000000000000000"
	slowContainerID    = "slow0000000000000000000000000000000000000000000000000000000000000"
	healthyContainerID = "good0000000000000000000000000000000000000000000000000000000000000"
	slowImage          = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	slowImageRef       = "busybox:slow"
	healthyImage       = "sha256:2222222222222222222222222222222222222222222222222222222222222222"

	// testInspectTimeout replaces defaultInspectTimeout; slowAnswer is when
	// the fake answers the slow objects (past testInspectTimeout, well within
	// longRequestTimeout); mustReturnWithin is how long a patched call may
	// take at most (generous, for a loaded machine); longRequestTimeout
	// stands in for --runtime-request-timeout.
	testInspectTimeout = 200 * time.Millisecond
	slowAnswer         = 3 * testInspectTimeout
	mustReturnWithin   = 3 * time.Second
	longRequestTimeout = time.Minute
)

// fakeDocker is a minimal Docker API on a unix socket. The inspects of the
// hung containers (hungContainerID until setHung says otherwise) block until
// the test ends or the client gives up on the request; abandoned counts the
// latter. The inspects of slowContainerID and slowImage answer after
// slowAnswer.
type fakeDocker struct {
	endpoint   string
	abandoned  int32
	release    chan struct{}
	releaseAll sync.Once

	mu       sync.Mutex
	hung     map[string]bool
	requests map[string]int // inspect requests received, by container id
}

func startFakeDocker(t *testing.T) *fakeDocker {
	f := &fakeDocker{hung: map[string]bool{hungContainerID: true}, requests: map[string]int{}}
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f.release = make(chan struct{})
	release := f.release
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/v1.") { // drop the API version prefix
			p = p[strings.Index(p[1:], "/")+1:]
		}
		if strings.HasPrefix(p, "/containers/") && strings.HasSuffix(p, "/json") {
			id := strings.TrimSuffix(strings.TrimPrefix(p, "/containers/"), "/json")
			f.mu.Lock()
			f.requests[id]++
			hung := f.hung[id]
			f.mu.Unlock()
			if hung {
				select { // docker waiting for the container's lock
				case <-release:
				case <-r.Context().Done(): // the client closed the connection
					atomic.AddInt32(&f.abandoned, 1)
				}
				return
			}
			if id == slowContainerID {
				time.Sleep(slowAnswer)
			}
			json.NewEncoder(w).Encode(map[string]interface{}{
				"Id":    id,
				"Name":  "/k8s_app_pod_ns_uid_0",
				"State": map[string]interface{}{"Running": true, "Pid": 4242},
			})
			return
		}
		switch p {
		case "/_ping":
			fmt.Fprint(w, "OK")
		case "/version":
			json.NewEncoder(w).Encode(map[string]string{"Version": "17.03.2-ce", "ApiVersion": "1.27"})
		case "/images/" + slowImage + "/json", "/images/" + slowImageRef + "/json":
			time.Sleep(slowAnswer)
			json.NewEncoder(w).Encode(map[string]interface{}{"Id": slowImage, "RepoTags": []string{slowImageRef}})
		case "/images/" + healthyImage + "/json":
			json.NewEncoder(w).Encode(map[string]interface{}{"Id": healthyImage, "RepoTags": []string{"busybox:latest"}})
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"message": "not found: " + p})
		}
	})
	srv := &http.Server{Handler: handler}
	go srv.Serve(l)
	t.Cleanup(func() {
		f.unblock()
		srv.Close()
	})
	f.endpoint = "unix://" + sock
	return f
}

// unblock answers every held and future inspect of the hung containers.
func (f *fakeDocker) unblock() { f.releaseAll.Do(func() { close(f.release) }) }

// setHung makes the inspects of id block (or answer again).
func (f *fakeDocker) setHung(id string, hung bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hung[id] = hung
}

// sent returns how many inspect requests for id reached the fake.
func (f *fakeDocker) sent(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[id]
}

func newTestClient(t *testing.T, f *fakeDocker, requestTimeout time.Duration) Interface {
	c, err := newDockerAPIClient(f.endpoint, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return newKubeDockerClient(c, requestTimeout, 0)
}

// namedCall is one call of the client under test.
type namedCall struct {
	what string
	call func() error
}

func setInspectTimeout(t *testing.T, d time.Duration) {
	old := defaultInspectTimeout
	defaultInspectTimeout = d
	t.Cleanup(func() { defaultInspectTimeout = old })
}

// call runs do on its own goroutine (do must not touch t) and returns its
// error and how long it took. If do has not returned after
// mustReturnWithin, the fake answers the held inspects so that do ends, and
// only once do has ended (and stopped reading the package variables the
// test changed) does the test fail.
func call(t *testing.T, f *fakeDocker, what string, do func() error) (error, time.Duration) {
	t.Helper()
	errc := make(chan error, 1)
	start := time.Now()
	go func() { errc <- do() }()
	select {
	case err := <-errc:
		return err, time.Since(start)
	case <-time.After(mustReturnWithin):
	}
	f.unblock()
	select {
	case <-errc:
	case <-time.After(mustReturnWithin):
		t.Errorf("%s did not end even after the fake docker answered", what)
	}
	t.Fatalf("%s still blocked after %v", what, mustReturnWithin)
	return nil, 0
}

// The creation paths inspect with InspectContainer: StartContainer (the
// log symlink, before kuberuntime runs the PostStart hook) and
// RunPodSandbox (resolv.conf). There a late answer must be waited for, up to
// the request timeout: giving up would fail StartContainer for a container
// that runs, and PostStart would never run. The image inspects (the image
// pull path) and, where the release has it, InspectContainerWithSize keep
// the request timeout too.
func TestCreationPathInspectsKeepRequestTimeout(t *testing.T) {
	setInspectTimeout(t, testInspectTimeout)
	f := startFakeDocker(t)
	d := newTestClient(t, f, longRequestTimeout)
	for _, c := range append([]namedCall{
		{"InspectContainer(slow)", func() error { _, err := d.InspectContainer(slowContainerID); return err }},
		{"InspectImageByID(slow)", func() error { _, err := d.InspectImageByID(slowImage); return err }},
		{"InspectImageByRef(slow)", func() error { _, err := d.InspectImageByRef(slowImageRef); return err }},
	}, releaseRequestTimeoutCalls(d)...) {
		err, took := call(t, f, c.what, c.call)
		if err != nil {
			t.Errorf("%s = %v after %v; want the answer sent after %v (request timeout %v, status inspect deadline %v)",
				c.what, err, took.Round(time.Millisecond), slowAnswer, longRequestTimeout, testInspectTimeout)
			continue
		}
		t.Logf("%s answered after %v", c.what, took.Round(time.Millisecond))
	}
}
