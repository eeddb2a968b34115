// Command workload is the long-running container of the node e2e tests.
//
//	workload                    serve HTTP on $ADDR:$PORT (default :8080)
//	workload write PATH DATA    write DATA to PATH and exit (init container)
//
// On start, if $WRITE_FILE is set and that file does not exist yet, it is
// written with $WRITE_DATA (default: hostname and start time), so a test can
// tell a restarted container (file kept) from a recreated one. Endpoints:
// /healthz (200) and /read?path=P (the file's content, 404 if missing).
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetOutput(os.Stdout)
	if len(os.Args) > 1 && os.Args[1] == "write" {
		if len(os.Args) != 4 {
			log.Fatal("usage: workload write PATH DATA")
		}
		if err := writeFile(os.Args[2], os.Args[3]); err != nil {
			log.Fatal(err)
		}
		return
	}

	start := time.Now()
	host, _ := os.Hostname()
	log.Printf("workload start host=%s pid=%d time=%s", host, os.Getpid(), start.Format(time.RFC3339Nano))

	if path := os.Getenv("WRITE_FILE"); path != "" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			data, ok := os.LookupEnv("WRITE_DATA")
			if !ok {
				data = fmt.Sprintf("%s %s\n", host, start.Format(time.RFC3339Nano))
			}
			if err := writeFile(path, data); err != nil {
				log.Fatal(err)
			}
			log.Printf("wrote %s", path)
		}
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/read", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(r.URL.Query().Get("path"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			http.Error(w, err.Error(), http.StatusNotFound)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			w.Write(b)
		}
	})
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	// ADDR=127.0.0.1 keeps a hostNetwork pod's server off the machine's
	// other interfaces.
	srv := &http.Server{Addr: os.Getenv("ADDR") + ":" + port, Handler: mux}

	// PID 1 ignores SIGTERM unless a handler is installed.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case s := <-sigs:
		log.Printf("workload stop signal=%v", s)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	case err := <-errc:
		log.Fatal(err)
	}
}

func writeFile(path, data string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(data), 0o644)
}
