package podhash

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// ReadNode asks the engine (here a fake one, behind the real docker CLI)
// only for kubelet-made app containers and reads the hash from
// dockershim's annotation label, in hex as kuberuntime writes it
// (0x5cee1837 is the field report's 1.7 hash, 1559107639); it never
// writes. It then inspects each container, each within InspectBound, and
// names the one whose inspect never answers.
func TestReadNode(t *testing.T) {
	defer func(b time.Duration) { InspectBound = b }(InspectBound)
	// Long enough for the docker CLI to start and send the hung inspect
	// on a loaded machine: at 500 ms, with builds beside it, the CLI had
	// not reached the engine when it was stopped (one inspect seen).
	InspectBound = 2 * time.Second
	sock := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var methods, filters []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method+" "+r.URL.Path)
		filters = append(filters, r.URL.Query().Get("filters"))
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/containers/hung/json"):
			<-r.Context().Done() // the docker-hang report's container
		case strings.HasSuffix(r.URL.Path, "/containers/abc/json"):
			w.Write([]byte(`{"Id":"abc"}`))
		case strings.Contains(r.URL.Query().Get("filters"), "podsandbox"):
			w.Write([]byte(`[{"Id":"sb1","Labels":{"io.kubernetes.docker.type":"podsandbox"}}]`))
		default:
			w.Write([]byte(`[{"Id":"abc","Labels":{"io.kubernetes.docker.type":"container","io.kubernetes.pod.namespace":"ns",
			"io.kubernetes.pod.name":"web-node1","io.kubernetes.pod.uid":"u1","io.kubernetes.container.name":"app",
			"io.kubernetes.container.hash":"111","io.kubernetes.sandbox.id":"sb1","annotation.io.kubernetes.container.hash":"5cee1837"}},
			{"Id":"hung","Labels":{"io.kubernetes.docker.type":"container","io.kubernetes.pod.namespace":"ns",
			"io.kubernetes.pod.name":"db-0","io.kubernetes.pod.uid":"u2","io.kubernetes.container.name":"db",
			"io.kubernetes.sandbox.id":"gone","annotation.io.kubernetes.container.hash":"1"}}]`))
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()

	st, err := ReadNode(context.Background(), "unix://"+sock, "node1")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	lists, sandboxLists, inspects := 0, 0, 0
	for i, m := range methods {
		switch {
		case strings.HasSuffix(m, "/_ping") && (strings.HasPrefix(m, "HEAD ") || strings.HasPrefix(m, "GET ")):
		case strings.HasPrefix(m, "GET ") && strings.HasSuffix(m, "/containers/json") && strings.Contains(filters[i], "io.kubernetes.docker.type=container"):
			lists++
		case strings.HasPrefix(m, "GET ") && strings.HasSuffix(m, "/containers/json") && strings.Contains(filters[i], "io.kubernetes.docker.type=podsandbox"):
			sandboxLists++
		case strings.HasPrefix(m, "GET ") && (strings.HasSuffix(m, "/containers/abc/json") || strings.HasSuffix(m, "/containers/hung/json")):
			inspects++
		default:
			t.Errorf("request %s (filters %s): not a ping, the filtered list or an inspect", m, filters[i])
		}
	}
	if sandboxLists != 1 {
		t.Errorf("sandbox lists: %d, want 1", sandboxLists)
	}
	// db-0's container names sandbox "gone", which the engine does not have.
	if len(st.Orphans) != 1 || st.Orphans[0].Key() != "ns/db-0/db" || st.Orphans[0].SandboxID != "gone" {
		t.Errorf("orphans: %+v, want ns/db-0/db", st.Orphans)
	}
	if inspects != 2 {
		t.Errorf("inspects: %d, want one per container: %v", inspects, methods)
	}
	if len(st.Hung) != 1 || st.Hung[0].ID != "hung" || st.Hung[0].Key() != "ns/db-0/db" {
		t.Errorf("hung containers: %+v, want ns/db-0/db", st.Hung)
	}
	if len(st.Containers) != 2 || st.Containers[0].ID != "hung" {
		t.Fatalf("containers: %+v", st.Containers)
	}
	st.Containers = st.Containers[1:]
	if lists != 1 {
		t.Errorf("requests: %v %v", methods, filters)
	}
	if len(st.Containers) != 1 || st.Containers[0].Hash != 1559107639 || st.Containers[0].PodUID != "u1" {
		t.Fatalf("containers: %+v", st.Containers[0])
	}
	if c := st.Match(Result{Pod: "ns/web", Container: "app"}); c == nil || c.ID != "abc" {
		t.Errorf("static pod web-node1 not matched to manifest web")
	}
	if _, err := ReadNode(context.Background(), "tcp://127.0.0.1:2375", ""); err == nil {
		t.Error("a tcp endpoint was accepted")
	}
}

// On an engine before 17.07 a hung container hangs `docker ps` itself:
// ReadNode gives up after ListBound and says why, instead of hanging.
func TestReadNodeListHangs(t *testing.T) {
	defer func(b time.Duration) { ListBound = b }(ListBound)
	ListBound = 500 * time.Millisecond
	sock := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/containers/json") {
			<-r.Context().Done()
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	start := time.Now()
	_, err = ReadNode(context.Background(), "unix://"+sock, "node1")
	if err == nil || !strings.Contains(err.Error(), "`docker ps` did not answer within 500ms") {
		t.Fatalf("error %v, want the list named as not answering", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("gave up after %s", took)
	}
}

// Which vanilla releases exit on a container whose sandbox is gone: 1.18
// through 1.22, and 1.23 until 1.23.14 (kubernetes#113354).
func TestOrphanExits(t *testing.T) {
	for release, want := range map[string]bool{"1.9.11": false, "1.13.12": false, "1.17.17": false, "1.18.6": true, "1.20.15": true,
		"1.22.17": true, "1.23.13": true, "1.23.14": false, "1.23.17": false, "1.24.0": false} {
		if got := orphanExits(release); got != want {
			t.Errorf("orphanExits(%s) = %v, want %v", release, got, want)
		}
	}
}
