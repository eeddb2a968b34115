package dockershim

import (
	"io/ioutil"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// windowStore is a checkpoint handler over a scratch dockershim root
// holding the file under the sandbox ID "sandbox".
func windowStore(t *testing.T, blob []byte) (CheckpointHandler, string, func()) {
	root, err := ioutil.TempDir("", "window-checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewPersistentCheckpointHandler(root)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, sandboxCheckpointDir, "sandbox")
	if err := ioutil.WriteFile(file, blob, 0644); err != nil {
		t.Fatal(err)
	}
	return h, file, func() { os.RemoveAll(root) }
}

// The checkpoints 1.7's (and patched 1.9.11's), this release's and 1.11's
// dockershim wrote are read with their data and kept; vanilla 1.10
// removes 1.7's and 1.11's as corrupt.
func TestWindowCheckpointsAreKept(t *testing.T) {
	for _, name := range windowCheckpoints {
		blob, _ := readWindowCheckpoint(t, name)
		h, file, done := windowStore(t, blob)
		cp, err := h.GetCheckpoint("sandbox")
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if strings.HasPrefix(name, "ports-") && (cp.Name != "web" || cp.Data == nil || len(cp.Data.PortMappings) != 2 || *cp.Data.PortMappings[0].HostPort != 8080) {
			t.Errorf("%s: read as %+v", name, cp)
		} else if strings.HasPrefix(name, "hostnetwork-") && (cp.Data == nil || !cp.Data.HostNetwork) {
			t.Errorf("%s: host_network lost: %+v", name, cp)
		}
		if _, err := os.Stat(file); err != nil {
			t.Errorf("%s: removed: %v", name, err)
		}
		done()
	}
}

// A checkpoint that matches no release's checksum is still corrupt, and
// removed.
func TestWindowCorruptCheckpointRemoved(t *testing.T) {
	blob, _ := readWindowCheckpoint(t, "ports-1.11.10.json")
	h, file, done := windowStore(t, []byte(strings.Replace(string(blob), `"host_port":8080`, `"host_port":8081`, 1)))
	defer done()
	if _, err := h.GetCheckpoint("sandbox"); err == nil {
		t.Error("a changed checkpoint was read")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a changed checkpoint was not removed: %v", err)
	}
}
