package framework

import (
	"testing"
	"time"
)

// A pod's sandbox that failed to start and the attempt after it, created
// within one second and listed newest first as docker ps lists them: the
// running one is the pod's, as the kubelet sees it.
func TestNewestByKeyWithinOneSecond(t *testing.T) {
	at := time.Date(2026, 11, 28, 1, 2, 3, 100_000_000, time.UTC)
	sandbox := func(id, state string, created time.Time) Container {
		return Container{ID: id, State: state, Created: created,
			Labels: map[string]string{LabelPodName: "unpinned", LabelDockerType: "podsandbox"}}
	}
	list := []Container{
		sandbox("retried", "running", at.Add(600*time.Millisecond)),
		sandbox("failed", "created", at),
		sandbox("replaced", "exited", at.Add(-40*time.Second)),
	}
	got := newestByKey(list)["unpinned/POD"]
	if got.ID != "retried" {
		t.Errorf("unpinned/POD is %s (%s), want the newest attempt, retried", got.ID, got.State)
	}
}
