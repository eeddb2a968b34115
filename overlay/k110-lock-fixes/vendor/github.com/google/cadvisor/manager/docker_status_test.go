package manager

import (
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/cadvisor/container/docker"
)

// cadvisor's start asks docker for its status once and keeps its storage
// driver (the images filesystem of a devicemapper node comes from it).
// v0.29.1's retryDockerStatus returned an empty status whenever docker
// answered (cadvisor#1902); v0.29.2, which 1.10.13 pins, returns the answer.
func TestDockerStatusAtStartIsDockersAnswer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	// The Docker API's answers to the two queries a status makes.
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/info"):
			json.NewEncoder(w).Encode(map[string]interface{}{
				"Driver":        "devicemapper",
				"DriverStatus":  [][2]string{{"Pool Name", "docker-thinpool"}},
				"DockerRootDir": "/var/lib/docker",
			})
		case strings.HasSuffix(r.URL.Path, "/version"):
			json.NewEncoder(w).Encode(map[string]string{"Version": "17.03.2-ce", "ApiVersion": "1.27"})
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(l)
	defer srv.Close()
	old := *docker.ArgDockerEndpoint
	*docker.ArgDockerEndpoint = "unix://" + sock
	defer func() { *docker.ArgDockerEndpoint = old }()

	got := retryDockerStatus()
	if got.Driver != "devicemapper" || got.DriverStatus["Pool Name"] != "docker-thinpool" || got.Version != "17.03.2-ce" {
		t.Fatalf("docker answered driver devicemapper (pool docker-thinpool), version 17.03.2-ce; cadvisor kept %+v", got)
	}
}
