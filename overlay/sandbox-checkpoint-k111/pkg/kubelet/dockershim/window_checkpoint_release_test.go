package dockershim

import (
	"io/ioutil"
	"os"
	"strings"
	"testing"

	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
)

// windowManager is a checkpoint manager over a scratch directory holding
// the file under the key "sandbox", as dockershim's own reads it.
func windowManager(t *testing.T, blob []byte) (checkpointmanager.CheckpointManager, func()) {
	dir, err := ioutil.TempDir("", "window-checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	if err := ioutil.WriteFile(dir+"/sandbox", blob, 0644); err != nil {
		t.Fatal(err)
	}
	m, err := checkpointmanager.NewCheckpointManager(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m, func() { os.RemoveAll(dir) }
}

// The checkpoints 1.7's (and patched 1.9.11's), 1.10's and this release's
// dockershim wrote are read and verified through the checkpoint manager,
// with their port mappings and host_network; vanilla 1.11 and 1.12 find
// 1.7's and 1.10's corrupt.
func TestWindowCheckpointsAreKept(t *testing.T) {
	for _, name := range windowCheckpoints {
		blob, _ := readWindowCheckpoint(t, name)
		m, done := windowManager(t, blob)
		cp := NewPodSandboxCheckpoint("", "", &CheckpointData{})
		if err := m.GetCheckpoint("sandbox", cp); err != nil {
			t.Errorf("%s: %v: the sandbox would lose its checkpoint", name, err)
			done()
			continue
		}
		_, podName, _, ports, hostNetwork := cp.GetData()
		if strings.HasPrefix(name, "ports-") && (podName != "web" || len(ports) != 2 || *ports[0].HostPort != 8080) {
			t.Errorf("%s: read as %s with %d port mappings", name, podName, len(ports))
		}
		if strings.HasPrefix(name, "hostnetwork-") && !hostNetwork {
			t.Errorf("%s: host_network lost", name)
		}
		done()
	}
}

// A checkpoint that matches no release's checksum is still corrupt.
func TestWindowCorruptCheckpointRejected(t *testing.T) {
	blob, _ := readWindowCheckpoint(t, "ports-1.10.13.json")
	m, done := windowManager(t, []byte(strings.Replace(string(blob), `"host_port":8080`, `"host_port":8081`, 1)))
	defer done()
	if err := m.GetCheckpoint("sandbox", NewPodSandboxCheckpoint("", "", &CheckpointData{})); err == nil {
		t.Error("a changed checkpoint verifies: corruption goes unnoticed")
	}
}
