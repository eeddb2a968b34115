package framework

import (
	"os"
	"path/filepath"
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

// The flags switch-node writes (quoted, %q) and kubeadm writes (quoted)
// read back as words; the last value of a flag wins, as on a command line.
func TestReadFlags(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dockershim")
	if err := os.WriteFile(p, []byte("# comment\nDOCKERSHIM_ARGS=\"--a=1 --pod-infra-container-image=x:1 --pod-infra-container-image=y:2\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readFlags(p, "DOCKERSHIM_ARGS")
	if err != nil || len(got) != 3 || got[0] != "--a=1" {
		t.Fatalf("readFlags = %q, %v", got, err)
	}
	if v := flagValue(got, "--pod-infra-container-image"); v != "y:2" {
		t.Errorf("flagValue = %q", v)
	}
	if _, err := readFlags(p, "KUBELET_KUBEADM_ARGS"); err == nil {
		t.Error("a missing variable read as set")
	}
}
