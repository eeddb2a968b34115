package rehearsal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// An instance's bridge, subnet and control plane ports (Layout) are the
// machine's, not a checkout's: one rehearsal runs as an instance at a
// time, from whichever checkout. A process holds an flock on the
// instance's lock file while it brings a cluster up, runs or removes it;
// the owner file names the checkout whose cluster stays up between runs
// (rehearsal up), until its rehearsal down. What instances share (the
// node image, etcd and CNI caches) is guarded where it is filled.
var (
	lockPath  = "/run/lock/kubelet-toolchain-rehearsal%s.lock"
	ownerPath = "/run/lock/kubelet-toolchain-rehearsal%s.owner"
)

// instancePath is the lock or owner file of an instance (0: no suffix).
func instancePath(pattern string, instance int) string {
	suffix := ""
	if instance > 0 {
		suffix = fmt.Sprintf("-%d", instance)
	}
	return fmt.Sprintf(pattern, suffix)
}

// holder is what the lock file says of the process holding it.
type holder struct {
	PID      int       `json:"pid"`
	Checkout string    `json:"checkout"`
	Command  string    `json:"command"`
	Since    time.Time `json:"since"`
}

// ErrMachineBusy is returned when another process or checkout has the
// machine's rehearsal.
var ErrMachineBusy = errors.New("the machine's rehearsal is taken")

// LockMachine takes the machine's rehearsal instance of l for this
// process, for its checkout's command. It fails at once, naming the
// holder, when another process holds it, or when another checkout's
// cluster is up on it. unlock releases it (the kernel does too when the
// process ends, however it ends).
func LockMachine(l Layout, command string) (unlock func(), err error) {
	root := l.Root
	lockPath := instancePath(lockPath, l.Instance)
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("rehearsal lock %s: %w", lockPath, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		var h holder
		data, _ := os.ReadFile(lockPath)
		f.Close()
		if json.Unmarshal(data, &h) == nil && h.PID != 0 {
			return nil, fmt.Errorf("%w: %q (pid %d) from %s has held it since %s; wait for it to end, or stop that process", ErrMachineBusy, h.Command, h.PID, h.Checkout, h.Since.Format(time.RFC3339))
		}
		return nil, fmt.Errorf("%w: another process holds %s", ErrMachineBusy, lockPath)
	}
	unlock = func() {
		f.Truncate(0)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	if owner := clusterOwner(l.Instance); owner != "" && owner != root {
		unlock()
		return nil, fmt.Errorf("%w: the rehearsal cluster of %s is up; remove it there first (make rehearsal-down)", ErrMachineBusy, owner)
	}
	data, _ := json.Marshal(holder{PID: os.Getpid(), Checkout: root, Command: command, Since: time.Now().UTC().Truncate(time.Second)})
	if err := f.Truncate(0); err == nil {
		f.WriteAt(data, 0)
	}
	return unlock, nil
}

// clusterOwner is the checkout whose cluster is up, if its state is still
// there ("" otherwise: a stale record, say after the checkout was deleted).
func clusterOwner(instance int) string {
	data, err := os.ReadFile(instancePath(ownerPath, instance))
	if err != nil {
		return ""
	}
	owner := strings.TrimSpace(string(data))
	if _, err := os.Stat(filepath.Join(NewLayoutFor(owner, instance).Dir, "state.json")); err != nil {
		return ""
	}
	return owner
}

// setClusterOwner records l's checkout as the owner of its instance's
// cluster, which is up; !up clears the record if that checkout holds it.
func setClusterOwner(l Layout, up bool) error {
	root, ownerPath := l.Root, instancePath(ownerPath, l.Instance)
	if up {
		return os.WriteFile(ownerPath, []byte(root+"\n"), 0o644)
	}
	if data, err := os.ReadFile(ownerPath); err == nil && strings.TrimSpace(string(data)) == root {
		return os.Remove(ownerPath)
	}
	return nil
}

// FreeInstance is the first of the instances first, first+stride, ...
// (up to MaxInstance) that the checkout at root may take now: no process
// holds its lock and no other checkout's cluster is up on it. The e2e's
// processes each ask from their own slot with the number of processes as
// the stride, so they never pick the same one; an instance another
// checkout left up (its rehearsal interrupted) is passed over, not taken
// down. skipped says why each earlier candidate was passed over.
func FreeInstance(root string, first, stride int) (instance int, skipped []string, err error) {
	if first < 1 || stride < 1 {
		return 0, nil, fmt.Errorf("rehearsal instances from %d by %d: want both >= 1 (instance 0 is make rehearsal's)", first, stride)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return 0, nil, err
	}
	for n := first; n <= MaxInstance; n += stride {
		unlock, err := LockMachine(NewLayoutFor(root, n), "rehearsal instance")
		if errors.Is(err, ErrMachineBusy) {
			skipped = append(skipped, fmt.Sprintf("instance %d: %v", n, err))
			continue
		}
		if err != nil {
			return 0, skipped, err
		}
		unlock()
		return n, skipped, nil
	}
	return 0, skipped, fmt.Errorf("no free rehearsal instance among %d, %d, ... up to %d: %s", first, first+stride, MaxInstance, strings.Join(skipped, "; "))
}
