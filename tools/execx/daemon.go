package execx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"kubelet-toolchain/tools/poll"
)

// Daemon is a process that outlives the toolchain: the rehearsal's control
// plane keeps running after `make rehearsal-up` returns. Its pid file
// names it, and it is recognised again only while its command line still
// holds Marker, so a recycled pid is never signalled.
type Daemon struct {
	Name string
	Args []string
	Env  []string
	// Log receives stdout and stderr (appended).
	Log string
	// PidFile is written once the process started.
	PidFile string
	// Marker must occur in one of Args (a path of ours, such as a data dir).
	Marker string
}

// StartDaemon starts d in a session of its own, detached from the
// toolchain's terminal and signals, and returns its pid.
func StartDaemon(ctx context.Context, d Daemon) (int, error) {
	if !argsHold(d.Args, d.Marker) {
		return 0, fmt.Errorf("daemon %s: marker %q is in none of its arguments", d.Name, d.Marker)
	}
	if err := os.MkdirAll(filepath.Dir(d.Log), 0o755); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(d.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command(d.Name, d.Args...)
	cmd.Env = append(cmd.Environ(), d.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	c := Cmd{Name: d.Name, Args: d.Args, Env: d.Env}
	logr.FromContextOrDiscard(ctx).V(2).Info("start daemon", "command", CommandLine(c), "log", d.Log)
	if err := cmd.Start(); err != nil {
		return 0, &Error{Command: CommandLine(c), Err: err}
	}
	pid := cmd.Process.Pid
	// Reap it if it dies while we still run; after we exit, init does.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Start returns once the child has exec'd, but the kernel fills in the
	// new program's arguments a moment later: until then its
	// /proc/<pid>/cmdline is empty and DaemonPid does not know it
	// (kube-controller-manager: empty in 8 of 200 reads right after Start on
	// an idle machine; on a busy one a health check took a starting control
	// plane component for dead). Return once it is recognisable, so
	// DaemonPid holds from here on.
	err = poll.Until(ctx, recogniseTimeout, 5*time.Millisecond, func(context.Context) (bool, error) {
		select {
		case werr := <-exited:
			return false, poll.Stop(fmt.Errorf("exited at start (%v); see %s", werr, d.Log))
		default:
		}
		return isDaemon(pid, d.Marker), nil
	})
	if err == nil {
		err = os.WriteFile(d.PidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644)
	}
	if err != nil {
		cmd.Process.Kill()
		return 0, &Error{Command: CommandLine(c), Err: err}
	}
	return pid, nil
}

// recogniseTimeout bounds how long a started daemon may take to show its
// arguments in /proc (its binary's headers read from disk).
const recogniseTimeout = 30 * time.Second

// DaemonPid returns the pid in pidFile if it names a live process whose
// command line holds marker.
func DaemonPid(pidFile, marker string) (int, bool) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if !isDaemon(pid, marker) {
		return 0, false
	}
	return pid, true
}

// isDaemon reports whether pid is a live process whose command line holds
// marker.
func isDaemon(pid int, marker string) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !argsHold(strings.Split(string(raw), "\x00"), marker) {
		return false
	}
	// A zombie (exited, not yet reaped) is not running.
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return false
		}
	}
	return true
}

// StopDaemon stops the daemon pidFile names (SIGTERM, then SIGKILL after
// grace) and removes the pid file. It reports whether one was running; a
// pid file naming no process of ours is removed and left at that.
func StopDaemon(pidFile, marker string, grace time.Duration) (bool, error) {
	pid, ok := DaemonPid(pidFile, marker)
	if !ok {
		if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
		return false, nil
	}
	gone := func(context.Context) (bool, error) {
		_, alive := DaemonPid(pidFile, marker)
		return !alive, nil
	}
	syscall.Kill(pid, syscall.SIGTERM)
	if poll.Until(context.Background(), grace, 100*time.Millisecond, gone) != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		poll.Until(context.Background(), 5*time.Second, 50*time.Millisecond, gone)
	}
	return true, os.Remove(pidFile)
}

func argsHold(args []string, marker string) bool {
	if marker == "" {
		return false
	}
	for _, a := range args {
		if strings.Contains(a, marker) {
			return true
		}
	}
	return false
}
