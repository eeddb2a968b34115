package podhash

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// ReadNode asks the engine (here a fake one, behind the real docker CLI)
// only for kubelet-made app containers and reads the hash from
// dockershim's annotation label, in hex as kuberuntime writes it
// (0x5cee1837 is the field report's 1.7 hash, 1559107639); it never
// writes, and never inspects (an inspect takes the container's lock).
func TestReadNode(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var methods, filters []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Method+" "+r.URL.Path)
		filters = append(filters, r.URL.Query().Get("filters"))
		w.Write([]byte(`[{"Id":"abc","Labels":{"io.kubernetes.docker.type":"container","io.kubernetes.pod.namespace":"ns",
			"io.kubernetes.pod.name":"web-node1","io.kubernetes.pod.uid":"u1","io.kubernetes.container.name":"app",
			"io.kubernetes.container.hash":"111","annotation.io.kubernetes.container.hash":"5cee1837"}}]`))
	})}
	go srv.Serve(ln)
	defer srv.Close()

	st, err := ReadNode(context.Background(), "unix://"+sock, "node1")
	if err != nil {
		t.Fatal(err)
	}
	lists := 0
	for i, m := range methods {
		switch {
		case strings.HasSuffix(m, "/_ping") && (strings.HasPrefix(m, "HEAD ") || strings.HasPrefix(m, "GET ")):
		case strings.HasPrefix(m, "GET ") && strings.HasSuffix(m, "/containers/json") && strings.Contains(filters[i], "io.kubernetes.docker.type=container"):
			lists++
		default:
			t.Errorf("request %s (filters %s): not a ping or the filtered list", m, filters[i])
		}
	}
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
