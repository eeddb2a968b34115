package dockershim

import (
	"encoding/json"
	"io/ioutil"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/*.json are the checkpoints vanilla 1.7.5's, 1.10.13's and
// 1.11.10's own dockershim wrote (CreateCheckpoint; NewPodSandboxCheckpoint
// and MarshalCheckpoint) for a pod with two host ports and for a
// host-network pod: each release's checksum, not this code's. 1.12's and
// 1.13's are 1.11's (the same bytes); patched 1.8.15 and 1.9.11 write
// 1.7's.
var windowCheckpoints = []string{"ports-1.7.5.json", "ports-1.10.13.json", "hostnetwork-1.10.13.json", "ports-1.11.10.json", "hostnetwork-1.11.10.json"}

func readWindowCheckpoint(t *testing.T, name string) (blob []byte, checksum uint64) {
	blob, err := ioutil.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var cp struct {
		CheckSum uint64 `json:"checksum"`
	}
	if err := json.Unmarshal(blob, &cp); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return blob, cp.CheckSum
}

// Every file's checksum is one of the window's.
func TestWindowChecksumsAreTheReleases(t *testing.T) {
	for _, name := range windowCheckpoints {
		blob, cs := readWindowCheckpoint(t, name)
		if !windowChecksum(cs, blob) {
			t.Errorf("%s: checksum %d is none the window computes", name, cs)
		}
	}
}

// A file whose data changed after it was written fails under every
// release's checksum.
func TestWindowChecksumsStillCatchCorruption(t *testing.T) {
	for _, name := range windowCheckpoints {
		blob, cs := readWindowCheckpoint(t, name)
		changed := strings.Replace(string(blob), `"host_port":8080`, `"host_port":8081`, 1)
		changed = strings.Replace(changed, `"host_network":true`, `"host_network":false`, 1)
		if changed == string(blob) {
			t.Fatalf("%s: nothing to change", name)
		}
		if windowChecksum(cs, []byte(changed)) {
			t.Errorf("%s with another host port or network verifies: corruption goes unnoticed", name)
		}
	}
}
