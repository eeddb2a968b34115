package dockershim

import (
	"encoding/json"
	"io/ioutil"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkpoints17 are the files 1.7.5's own dockershim wrote
// (PersistentCheckpointHandler.CreateCheckpoint, run in the 1.7.5 tree) for
// the checkpoints testCheckpoints returns. 1.7.5 also accepted the
// "plain" file with "data":{"host_network":true} added: its decoder
// ignores the field and its checksum does not cover it.
var checkpoints17 = map[string]string{
	"nodata":   `{"version":"v1","name":"n","namespace":"ns","checksum":1747271778}`,
	"plain":    `{"version":"v1","name":"web-node","namespace":"default","data":{},"checksum":720045308}`,
	"hostport": `{"version":"v1","name":"proxy-node","namespace":"kube-system","data":{"port_mappings":[{"protocol":"tcp","container_port":80,"host_port":8080},{"protocol":"udp","container_port":53,"host_port":5353}]},"checksum":3911161209}`,
}

func testCheckpoints() map[string]*PodSandboxCheckpoint {
	tcp, udp := protocolTCP, protocolUDP
	p := func(i int32) *int32 { return &i }
	return map[string]*PodSandboxCheckpoint{
		"nodata":   {Version: schemaVersion, Namespace: "ns", Name: "n"},
		"plain":    {Version: schemaVersion, Namespace: "default", Name: "web-node", Data: &CheckpointData{}},
		"hostport": {Version: schemaVersion, Namespace: "kube-system", Name: "proxy-node", Data: &CheckpointData{PortMappings: []*PortMapping{{Protocol: &tcp, ContainerPort: p(80), HostPort: p(8080)}, {Protocol: &udp, ContainerPort: p(53), HostPort: p(5353)}}}},
	}
}

func newTestHandler(t *testing.T) (CheckpointHandler, string, func()) {
	root, err := ioutil.TempDir("", "legacy-checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewPersistentCheckpointHandler(root)
	if err != nil {
		t.Fatal(err)
	}
	return h, filepath.Join(root, sandboxCheckpointDir), func() { os.RemoveAll(root) }
}

func sameCheckpoint(a, b *PodSandboxCheckpoint) bool {
	x, y := *a, *b
	x.CheckSum, y.CheckSum = 0, 0
	return reflect.DeepEqual(x, y)
}

// Checkpoints 1.7 wrote are read, not deleted.
func TestCheckpointsOf17AreKept(t *testing.T) {
	h, dir, done := newTestHandler(t)
	defer done()
	want := testCheckpoints()
	for id, blob := range checkpoints17 {
		if err := ioutil.WriteFile(filepath.Join(dir, id), []byte(blob), 0644); err != nil {
			t.Fatal(err)
		}
		got, err := h.GetCheckpoint(id)
		if err != nil {
			t.Errorf("%s: 1.7's checkpoint refused: %v", id, err)
			continue
		}
		if !sameCheckpoint(got, want[id]) {
			t.Errorf("%s: read %+v, want %+v", id, got, want[id])
		}
		if _, err := os.Stat(filepath.Join(dir, id)); err != nil {
			t.Errorf("%s: 1.7's checkpoint deleted: %v", id, err)
		}
	}
}

// What this kubelet writes is byte for byte what 1.7 writes, so 1.7
// accepts it; HostNetwork is stored too, outside 1.7's checksum, and read
// back.
func TestCheckpointsWrittenAre17s(t *testing.T) {
	h, dir, done := newTestHandler(t)
	defer done()
	for id, c := range testCheckpoints() {
		if err := h.CreateCheckpoint(id, c); err != nil {
			t.Fatal(err)
		}
		blob, err := ioutil.ReadFile(filepath.Join(dir, id))
		if err != nil {
			t.Fatal(err)
		}
		if string(blob) != checkpoints17[id] {
			t.Errorf("%s: wrote\n%s\n1.7.5 writes\n%s", id, blob, checkpoints17[id])
		}
	}
	hostnet := testCheckpoints()["plain"]
	hostnet.Data.HostNetwork = true
	if err := h.CreateCheckpoint("hostnet", hostnet); err != nil {
		t.Fatal(err)
	}
	blob, _ := ioutil.ReadFile(filepath.Join(dir, "hostnet"))
	var stored struct {
		Data     map[string]interface{} `json:"data"`
		CheckSum uint64                 `json:"checksum"`
	}
	if err := json.Unmarshal(blob, &stored); err != nil {
		t.Fatal(err)
	}
	// 1.7 computes "plain"'s checksum for this file (it ignores host_network).
	if stored.Data["host_network"] != true || stored.CheckSum != 720045308 {
		t.Errorf("hostnet: wrote %s; want host_network true and 1.7's checksum of the same checkpoint without it, 720045308", blob)
	}
	got, err := h.GetCheckpoint("hostnet")
	if err != nil || !got.Data.HostNetwork {
		t.Errorf("hostnet: read back %+v, %v", got, err)
	}
}

// Checkpoints this release's vanilla kubelet wrote (its checksum covers
// HostNetwork; 1.8's and 1.9's checkpoint types are the same, so vanilla
// 1.8's and 1.9's checkpoints alike) are still read.
func TestCheckpointsOfVanillaAreKept(t *testing.T) {
	h, dir, done := newTestHandler(t)
	defer done()
	for id, c := range testCheckpoints() {
		for _, hostNetwork := range []bool{false, true} {
			if c.Data == nil {
				c.Data = &CheckpointData{}
			}
			c.Data.HostNetwork = hostNetwork
			c.CheckSum = calculateChecksum(*c)
			blob, _ := json.Marshal(c)
			if err := ioutil.WriteFile(filepath.Join(dir, id), blob, 0644); err != nil {
				t.Fatal(err)
			}
			got, err := h.GetCheckpoint(id)
			if err != nil || got.Data.HostNetwork != hostNetwork {
				t.Errorf("%s (hostNetwork %v): vanilla's checkpoint read as %+v, %v", id, hostNetwork, got, err)
			}
		}
	}
}

// A checkpoint that matches neither checksum is still corrupt, and removed.
func TestCorruptCheckpointRemoved(t *testing.T) {
	h, dir, done := newTestHandler(t)
	defer done()
	blob := strings.Replace(checkpoints17["hostport"], "8080", "8081", 1)
	if err := ioutil.WriteFile(filepath.Join(dir, "bad"), []byte(blob), 0644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.GetCheckpoint("bad"); err == nil {
		t.Error("a checkpoint with an edited port was accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); !os.IsNotExist(err) {
		t.Errorf("corrupt checkpoint not removed: %v", err)
	}
}
