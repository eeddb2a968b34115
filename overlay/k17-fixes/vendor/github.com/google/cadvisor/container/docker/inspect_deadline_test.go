// Tests for the deadline on cadvisor's docker inspects (patch
// "cadvisor: put a deadline on docker inspect ..."). A fake Docker API on a
// unix socket never answers the inspect of one container, as docker does
// while that container's lock is held; every inspect must give up after
// inspectTimeout, and healthy containers must still be handled.

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
	"testing"
	"time"

	docker "github.com/docker/engine-api/client"
	"github.com/google/cadvisor/container"
	containerlibcontainer "github.com/google/cadvisor/container/libcontainer"
)

var (
	hungID    = strings.Repeat("a", 64) // its inspect never answers
	healthyID = strings.Repeat("b", 64) // running, has its own IP
	joinerID  = strings.Repeat("c", 64) // running, in hungID's network namespace
	podID     = strings.Repeat("d", 64) // running, in healthyID's network namespace
)

// testInspectTimeout replaces inspectTimeout; mustReturnWithin is how long
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

// startFakeDocker serves a minimal Docker API on a unix socket and returns
// a client for it. GET [/vX.Y]/containers/<hungID>/json blocks until the
// test ends.
func startFakeDocker(t *testing.T) *docker.Client {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	containers := map[string]interface{}{
		healthyID: containerJSON(healthyID, "healthy", "default", "10.1.0.2"),
		joinerID:  containerJSON(joinerID, "joiner", "container:"+hungID, ""),
		podID:     containerJSON(podID, "app", "container:"+healthyID, ""),
	}
	release := make(chan struct{})
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
		case p == "/containers/"+hungID+"/json":
			<-release // docker waiting for the container's lock
		case strings.HasPrefix(p, "/containers/") && strings.HasSuffix(p, "/json"):
			id := strings.TrimSuffix(strings.TrimPrefix(p, "/containers/"), "/json")
			if c, ok := containers[id]; ok {
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
	client, err := docker.NewClient("unix://"+sock, "1.24", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := inspectTimeout
	inspectTimeout = testInspectTimeout
	t.Cleanup(func() {
		inspectTimeout = old
		close(release)
		srv.Close()
	})
	return client
}

// within runs f and fails the test if it has not returned after
// mustReturnWithin; f runs on its own goroutine and must not touch t.
func within(t *testing.T, what string, f func()) time.Duration {
	done := make(chan struct{})
	start := time.Now()
	go func() { f(); close(done) }()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(mustReturnWithin):
		t.Fatalf("%s still blocked after %v; inspect deadline is %v", what, mustReturnWithin, testInspectTimeout)
		return 0
	}
}

func TestCanHandleAndAcceptHungInspect(t *testing.T) {
	f := &dockerFactory{client: startFakeDocker(t)}

	var canHandle bool
	var err error
	took := within(t, "CanHandleAndAccept(hung container)", func() {
		canHandle, _, err = f.CanHandleAndAccept("/kubepods/pod1/" + hungID)
	})
	if canHandle || err == nil {
		t.Fatalf("hung container: got canHandle=%v err=%v, want false and an error (left to the raw factory)", canHandle, err)
	}
	if !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("hung container: error %q does not say the deadline was exceeded", err)
	}
	t.Logf("hung container given up after %v: %v", took, err)

	// The other containers are still accepted by the docker factory.
	canHandle, canAccept, err := f.CanHandleAndAccept("/kubepods/pod2/" + healthyID)
	if !canHandle || !canAccept || err != nil {
		t.Fatalf("healthy container: got %v, %v, %v; want true, true, nil", canHandle, canAccept, err)
	}
}

func TestNewDockerContainerHandlerHungInspect(t *testing.T) {
	client := startFakeDocker(t)
	storageDir := t.TempDir()
	for _, id := range []string{hungID, healthyID, joinerID, podID} {
		d := filepath.Join(storageDir, "image", "overlay2", "layerdb", "mounts", id)
		if err := os.MkdirAll(d, 0755); err != nil {
			t.Fatal(err)
		}
		if err := ioutil.WriteFile(filepath.Join(d, "mount-id"), []byte("rw-"+id[:8]), 0644); err != nil {
			t.Fatal(err)
		}
	}
	newHandler := func(id string) (container.ContainerHandler, error) {
		return newDockerContainerHandler(client, "/kubepods/pod/"+id, nil, nil, overlay2StorageDriver,
			storageDir, &containerlibcontainer.CgroupSubsystems{}, true, nil, []int{17, 3, 2},
			container.MetricSet{container.DiskUsageMetrics: struct{}{}}, "", nil, nil)
	}

	t.Run("own inspect hangs", func(t *testing.T) {
		var err error
		within(t, "newDockerContainerHandler(hung container)", func() { _, err = newHandler(hungID) })
		if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
			t.Errorf("got error %v, want a deadline error", err)
		}
	})

	// The container answers, but the one whose network namespace it joins
	// ("container:<hungID>", looked up for its IP) does not.
	t.Run("network-mode container hangs", func(t *testing.T) {
		var err error
		within(t, "newDockerContainerHandler(container joining the hung one's network)", func() { _, err = newHandler(joinerID) })
		if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
			t.Errorf("got error %v, want a deadline error", err)
		}
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
