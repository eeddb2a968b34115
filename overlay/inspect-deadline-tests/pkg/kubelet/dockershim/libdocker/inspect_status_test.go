// Tests of InspectContainerForStatus, the status paths' inspect (patch
// "dockershim: ..."): its deadline and its backoff after a timeout. The
// fake Docker API is in inspect_deadline_test.go.

package libdocker

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func setInspectBackoff(t *testing.T, initial, max time.Duration) {
	oldInitial, oldMax := inspectBackoffInitial, inspectBackoffMax
	inspectBackoffInitial, inspectBackoffMax = initial, max
	t.Cleanup(func() { inspectBackoffInitial, inspectBackoffMax = oldInitial, oldMax })
}

// expectOperationTimeout runs a call that docker does not answer: it must
// return within mustReturnWithin, with operationTimeout{context.DeadlineExceeded},
// and must not leave its request open on docker's socket.
func expectOperationTimeout(t *testing.T, f *fakeDocker, what string, do func() error) {
	abandoned := atomic.LoadInt32(&f.abandoned)
	err, took := call(t, f, what, do)
	if ot, ok := err.(operationTimeout); !ok || ot.err != context.DeadlineExceeded {
		t.Fatalf("%s: got error %#v after %v, want operationTimeout{context.DeadlineExceeded}", what, err, took)
	}
	t.Logf("%s gave up after %v: %v", what, took.Round(time.Millisecond), err)
	for deadline := time.Now().Add(mustReturnWithin); atomic.LoadInt32(&f.abandoned) == abandoned; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the timed-out request is still open on the docker socket", what)
		}
	}
}

func TestStatusInspectDeadline(t *testing.T) {
	setInspectTimeout(t, testInspectTimeout)
	f := startFakeDocker(t)
	d := newTestClient(t, f, longRequestTimeout)

	expectOperationTimeout(t, f, "InspectContainerForStatus(hung)", func() error { _, err := d.InspectContainerForStatus(hungContainerID); return err })

	c, err := d.InspectContainerForStatus(healthyContainerID)
	if err != nil || c.ID != healthyContainerID || !c.State.Running {
		t.Fatalf("InspectContainerForStatus(healthy) = %+v, %v", c, err)
	}

	// A request timeout shorter than defaultInspectTimeout still wins.
	setInspectTimeout(t, time.Minute)
	short := newTestClient(t, f, testInspectTimeout)
	expectOperationTimeout(t, f, "InspectContainerForStatus(hung) with a short request timeout", func() error { _, err := short.InspectContainerForStatus(hungContainerID); return err })
}

// After a timeout, status inspects of that container fail at once without
// a request to docker for a window that doubles with each further timeout;
// an answer ends it. Other containers are not affected.
func TestStatusInspectBackoff(t *testing.T) {
	const initial, max = 400 * time.Millisecond, 800 * time.Millisecond
	setInspectTimeout(t, testInspectTimeout)
	setInspectBackoff(t, initial, max)
	f := startFakeDocker(t)
	d := newTestClient(t, f, longRequestTimeout)
	inspect := func() error { _, err := d.InspectContainerForStatus(hungContainerID); return err }
	expectBackedOff := func(what string, wantSent int) {
		err, took := call(t, f, what, inspect)
		if _, ok := err.(operationTimeout); !ok || !strings.Contains(err.Error(), "not sent") {
			t.Fatalf("%s: got %v, want an operationTimeout saying the inspect was not sent", what, err)
		}
		if took > testInspectTimeout/2 {
			t.Errorf("%s took %v: backed-off inspects must fail at once", what, took)
		}
		if n := f.sent(hungContainerID); n != wantSent {
			t.Errorf("%s: %d inspects reached docker, want %d", what, n, wantSent)
		}
	}

	expectOperationTimeout(t, f, "first inspect", inspect)
	timedOut := time.Now()
	expectBackedOff("inspect right after the timeout", 1)

	// Other containers are inspected as usual meanwhile.
	if _, err := d.InspectContainerForStatus(healthyContainerID); err != nil {
		t.Fatalf("InspectContainerForStatus(healthy) during another container's backoff: %v", err)
	}

	time.Sleep(time.Until(timedOut.Add(initial + 50*time.Millisecond)))
	expectOperationTimeout(t, f, "inspect after the first window", inspect)
	timedOut = time.Now()
	if n := f.sent(hungContainerID); n != 2 {
		t.Fatalf("inspect after the first window: %d inspects reached docker, want 2", n)
	}
	// The window doubled: past the first window's length it still holds.
	time.Sleep(time.Until(timedOut.Add(initial + 100*time.Millisecond)))
	expectBackedOff("inspect inside the doubled window", 2)

	// Docker answers again: the next inspect after the window gets the
	// answer, and the backoff is over.
	f.setHung(hungContainerID, false)
	time.Sleep(time.Until(timedOut.Add(max + 50*time.Millisecond)))
	for i := 0; i < 2; i++ {
		if err, _ := call(t, f, "inspect after docker answers again", inspect); err != nil {
			t.Fatalf("inspect %d after docker answers again: %v", i+1, err)
		}
	}
	if n := f.sent(hungContainerID); n != 4 {
		t.Errorf("after docker answers again: %d inspects reached docker, want 4", n)
	}
}
