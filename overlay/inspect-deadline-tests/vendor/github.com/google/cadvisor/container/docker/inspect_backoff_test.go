// Tests of the backoff of cadvisor's docker inspects after a timeout (patch
// "cadvisor: put a deadline on docker inspect ..."). The fake Docker API is
// in inspect_deadline_test.go.
//
// Shared by every release's fixes (series inspect-deadline-tests); what
// differs between releases is in the fixes series' inspect_release_test.go.

package docker

import (
	"strings"
	"testing"
	"time"
)

// After a timeout, inspects of that container fail at once without a
// request to docker (so the manager's containersLock is not held for the
// deadline at every housekeeping) for a window that doubles with each
// further timeout; an answer ends it.
func TestInspectBackoff(t *testing.T) {
	const initial, max = 400 * time.Millisecond, 800 * time.Millisecond
	oldInitial, oldMax := inspectBackoffInitial, inspectBackoffMax
	inspectBackoffInitial, inspectBackoffMax = initial, max
	t.Cleanup(func() { inspectBackoffInitial, inspectBackoffMax = oldInitial, oldMax })
	fd := startFakeDocker(t)
	f := &dockerFactory{client: fd.client}
	id := hung(100)
	name := "/kubepods/pod1/" + id

	try := func(what string) (bool, bool, error, time.Duration) {
		var canHandle, canAccept bool
		var err error
		took := within(t, fd, what, func() { canHandle, canAccept, err = f.CanHandleAndAccept(name) })
		return canHandle, canAccept, err, took
	}
	expectSent := func(what string, want int) {
		t.Helper()
		if sent, _ := fd.requests(id); sent != want {
			t.Fatalf("%s: %d inspects reached docker, want %d", what, sent, want)
		}
	}
	expectBackedOff := func(what string) {
		t.Helper()
		canHandle, canAccept, err, took := try(what)
		if !canHandle || canAccept || !isInspectTimeout(err) || !strings.Contains(err.Error(), "not sent") {
			t.Fatalf("%s: got %v, %v, %v; want true, false and an error saying the inspect was not sent", what, canHandle, canAccept, err)
		}
		if took > testInspectTimeout/2 {
			t.Errorf("%s took %v: backed-off inspects must fail at once", what, took)
		}
	}

	try("first inspect")
	timedOut := time.Now()
	expectSent("first inspect", 1)
	expectBackedOff("inspect right after the timeout")
	expectSent("inspect right after the timeout", 1)

	time.Sleep(time.Until(timedOut.Add(initial + 50*time.Millisecond)))
	if _, _, err, _ := try("inspect after the first window"); err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("inspect after the first window: got %v, want a deadline error", err)
	}
	timedOut = time.Now()
	expectSent("inspect after the first window", 2)
	time.Sleep(time.Until(timedOut.Add(initial + 100*time.Millisecond)))
	expectBackedOff("inspect inside the doubled window")
	expectSent("inspect inside the doubled window", 2)

	// Docker answers again (the container is known now): after the window
	// the container is accepted, and the backoff is over.
	fd.addContainer(id, containerJSON(id, "late", "default", "10.1.0.9"))
	fd.unblock()
	time.Sleep(time.Until(timedOut.Add(max + 50*time.Millisecond)))
	for i := 0; i < 2; i++ {
		if canHandle, canAccept, err, _ := try("inspect after docker answers again"); !canHandle || !canAccept || err != nil {
			t.Fatalf("inspect %d after docker answers again: got %v, %v, %v; want true, true, nil", i+1, canHandle, canAccept, err)
		}
	}
	expectSent("after docker answers again", 4)
}
