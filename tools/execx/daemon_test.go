package execx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func TestDaemonStartsRecognisesAndStops(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "sleep.pid")
	d := Daemon{Name: "sleep", Args: []string{"300"}, Log: filepath.Join(dir, "sleep.log"), PidFile: pidFile, Marker: "300"}
	pid, err := StartDaemon(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := DaemonPid(pidFile, "300"); !ok || got != pid {
		t.Fatalf("DaemonPid = %d, %v; want %d, true", got, ok, pid)
	}
	// Another marker: the same pid is not ours under that name.
	if _, ok := DaemonPid(pidFile, "not-in-its-args"); ok {
		t.Fatal("a process without the marker was taken for the daemon")
	}
	running, err := StopDaemon(pidFile, "300", 5*time.Second)
	if err != nil || !running {
		t.Fatalf("StopDaemon = %v, %v", running, err)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Fatalf("pid file left: %v", err)
	}
	if _, ok := DaemonPid(pidFile, "300"); ok {
		t.Fatal("daemon still reported running")
	}
}

func TestStopDaemonLeavesOthersAlone(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "x.pid")
	// A pid file naming this test process: running, but not with the marker.
	os.WriteFile(pidFile, []byte("1\n"), 0o644)
	running, err := StopDaemon(pidFile, filepath.Join(dir, "marker"), time.Second)
	if err != nil || running {
		t.Fatalf("StopDaemon = %v, %v; want false, nil (pid 1 is not ours)", running, err)
	}
}

func TestStartDaemonNeedsItsMarker(t *testing.T) {
	dir := t.TempDir()
	_, err := StartDaemon(context.Background(), Daemon{Name: "sleep", Args: []string{"1"}, Log: filepath.Join(dir, "l"), PidFile: filepath.Join(dir, "p"), Marker: dir})
	if err == nil {
		t.Fatal("a daemon whose arguments lack the marker was started: it could never be stopped safely")
	}
}

// A daemon is recognised from the moment StartDaemon returns. Right after
// exec its /proc/<pid>/cmdline is briefly empty (sleep: 65 of 200 reads
// right after Start), and on a busy machine a health check that asked then
// took a starting kube-controller-manager for dead. Starts side by side
// keep the cores busy, as CI does.
func TestStartedDaemonIsRecognisedAtOnce(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	defer close(stop)
	for range 2 * runtime.NumCPU() {
		go func() { // keep the cores busy, as CI does
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	errs := make(chan error, 8)
	for w := range 8 {
		go func() {
			errs <- func() error {
				// sleep adds its arguments up: the second one is the marker.
				marker := fmt.Sprintf("0.%d%d", os.Getpid(), w)
				pidFile := filepath.Join(dir, fmt.Sprintf("sleep-%d.pid", w))
				for i := range 250 {
					d := Daemon{Name: "sleep", Args: []string{"300", marker}, Log: filepath.Join(dir, "sleep.log"), PidFile: pidFile, Marker: marker}
					pid, err := StartDaemon(context.Background(), d)
					if err != nil {
						return err
					}
					got, ok := DaemonPid(pidFile, marker)
					syscall.Kill(pid, syscall.SIGKILL) // StopDaemon has tests of its own
					if !ok || got != pid {
						return fmt.Errorf("start %d of %s: DaemonPid right after StartDaemon = %d, %v; want %d, true", i, marker, got, ok, pid)
					}
				}
				return nil
			}()
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
