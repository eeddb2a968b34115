// Tests for the short deadline on read-only inspects (patch "dockershim:
// ..."). A fake Docker API on a unix socket never answers the inspect of
// one container and one image, as docker does while a container's lock is
// held; with a long request timeout (the 2-minute one in production) each
// inspect must still give up after defaultInspectTimeout with the usual
// operation timeout error, and healthy objects must still be inspected.

package libdocker

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dockerapi "github.com/docker/docker/client"
)

const (
	hungContainerID    = "hung0000000000000000000000000000000000000000000000000000000000000"
	healthyContainerID = "good0000000000000000000000000000000000000000000000000000000000000"
	hungImage          = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	healthyImage       = "sha256:2222222222222222222222222222222222222222222222222222222222222222"

	// testInspectTimeout replaces defaultInspectTimeout; mustReturnWithin
	// is how long a patched call may take at most (generous, for a loaded
	// machine); longRequestTimeout stands in for --runtime-request-timeout.
	testInspectTimeout = 200 * time.Millisecond
	mustReturnWithin   = 3 * time.Second
	longRequestTimeout = time.Minute
)

// fakeDocker is a minimal Docker API on a unix socket. The inspects of
// hungContainerID and hungImage block until the test ends or the client
// gives up on the request; abandoned counts the latter.
type fakeDocker struct {
	endpoint  string
	abandoned int32
}

func startFakeDocker(t *testing.T) *fakeDocker {
	f := &fakeDocker{}
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/v1.") { // drop the API version prefix
			p = p[strings.Index(p[1:], "/")+1:]
		}
		switch p {
		case "/_ping":
			fmt.Fprint(w, "OK")
		case "/version":
			json.NewEncoder(w).Encode(map[string]string{"Version": "17.03.2-ce", "ApiVersion": "1.27"})
		case "/containers/" + hungContainerID + "/json", "/images/" + hungImage + "/json":
			select { // docker waiting for the container's lock
			case <-release:
			case <-r.Context().Done(): // the client closed the connection
				atomic.AddInt32(&f.abandoned, 1)
			}
		case "/containers/" + healthyContainerID + "/json":
			json.NewEncoder(w).Encode(map[string]interface{}{
				"Id":    healthyContainerID,
				"Name":  "/k8s_app_pod_ns_uid_0",
				"State": map[string]interface{}{"Running": true, "Pid": 4242},
			})
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
		close(release)
		srv.Close()
	})
	f.endpoint = "unix://" + sock
	return f
}

func newTestClient(t *testing.T, f *fakeDocker, requestTimeout time.Duration) Interface {
	c, err := dockerapi.NewClient(f.endpoint, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return newKubeDockerClient(c, requestTimeout, 0)
}

func setInspectTimeout(t *testing.T, d time.Duration) {
	old := defaultInspectTimeout
	defaultInspectTimeout = d
	t.Cleanup(func() { defaultInspectTimeout = old })
}

// expectOperationTimeout runs call on its own goroutine; it must return
// within mustReturnWithin, with operationTimeout{context.DeadlineExceeded},
// and must not leave its request open on docker's socket (a relist every
// second would pile them up).
func expectOperationTimeout(t *testing.T, f *fakeDocker, what string, call func() error) {
	abandoned := atomic.LoadInt32(&f.abandoned)
	errc := make(chan error, 1)
	start := time.Now()
	go func() { errc <- call() }()
	select {
	case err := <-errc:
		took := time.Since(start)
		if ot, ok := err.(operationTimeout); !ok || ot.err != context.DeadlineExceeded {
			t.Fatalf("%s: got error %#v, want operationTimeout{context.DeadlineExceeded}", what, err)
		}
		t.Logf("%s gave up after %v: %v", what, took, err)
		for deadline := time.Now().Add(mustReturnWithin); atomic.LoadInt32(&f.abandoned) == abandoned; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the timed-out request is still open on the docker socket", what)
			}
		}
	case <-time.After(mustReturnWithin):
		t.Fatalf("%s still blocked after %v; inspect deadline is %v", what, mustReturnWithin, testInspectTimeout)
	}
}

func TestInspectDeadline(t *testing.T) {
	setInspectTimeout(t, testInspectTimeout)
	f := startFakeDocker(t)
	d := newTestClient(t, f, longRequestTimeout)

	t.Run("InspectContainer", func(t *testing.T) {
		expectOperationTimeout(t, f, "InspectContainer(hung)", func() error { _, err := d.InspectContainer(hungContainerID); return err })
	})
	t.Run("InspectContainerWithSize", func(t *testing.T) {
		expectOperationTimeout(t, f, "InspectContainerWithSize(hung)", func() error { _, err := d.InspectContainerWithSize(hungContainerID); return err })
	})
	t.Run("InspectImageByID", func(t *testing.T) {
		expectOperationTimeout(t, f, "InspectImageByID(hung)", func() error { _, err := d.InspectImageByID(hungImage); return err })
	})
	t.Run("InspectImageByRef", func(t *testing.T) {
		expectOperationTimeout(t, f, "InspectImageByRef(hung)", func() error { _, err := d.InspectImageByRef(hungImage); return err })
	})
	t.Run("healthy objects", func(t *testing.T) {
		c, err := d.InspectContainer(healthyContainerID)
		if err != nil || c.ID != healthyContainerID || !c.State.Running {
			t.Fatalf("InspectContainer(healthy) = %+v, %v", c, err)
		}
		img, err := d.InspectImageByID(healthyImage)
		if err != nil || img.ID != healthyImage {
			t.Fatalf("InspectImageByID(healthy) = %+v, %v", img, err)
		}
	})
	// A request timeout shorter than defaultInspectTimeout still wins.
	t.Run("capped by a shorter request timeout", func(t *testing.T) {
		setInspectTimeout(t, time.Minute)
		short := newTestClient(t, f, testInspectTimeout)
		expectOperationTimeout(t, f, "InspectContainer(hung) with a short request timeout", func() error { _, err := short.InspectContainer(hungContainerID); return err })
	})
}
