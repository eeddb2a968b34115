package dockershim

import (
	"io/ioutil"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/*.json are the checkpoints vanilla 1.13.12's and 1.14.10's own
// dockershim (NewPodSandboxCheckpoint, MarshalCheckpoint) wrote for a pod
// with two host ports, one of them (hostip-) bound to a host IP: each
// release's checksum, not this code's.
var roadCheckpoints = []string{"ports-1.13.12.json", "ports-1.14.10.json", "hostip-1.14.10.json"}

func readRoadCheckpoint(t *testing.T, name string) []byte {
	blob, err := ioutil.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return blob
}

// The checkpoints 1.13's and 1.14's dockershim wrote are read and verified
// as the checkpoint manager does (the vanilla dockershim of either release
// finds the other's corrupt and removes it), with the port mappings as
// this release decodes them.
func TestRoadCheckpointsAreKept(t *testing.T) {
	for _, name := range roadCheckpoints {
		cp := &PodSandboxCheckpoint{}
		if err := cp.UnmarshalCheckpoint(readRoadCheckpoint(t, name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := cp.VerifyChecksum(); err != nil {
			t.Errorf("%s: %v: the sandbox would lose its checkpoint", name, err)
			continue
		}
		_, podName, ns, ports, _ := cp.GetData()
		if podName != "web" || ns != "default" || len(ports) != 2 || *ports[0].HostPort != 8080 || *ports[1].HostPort != 53 {
			t.Errorf("%s: read as %s/%s with %d port mappings", name, ns, podName, len(ports))
		}
	}
}

// A checkpoint whose data changed after it was written still fails, under
// every release's checksum; one this release writes verifies.
func TestRoadCheckpointsStillCatchCorruption(t *testing.T) {
	for _, name := range roadCheckpoints {
		blob := strings.Replace(string(readRoadCheckpoint(t, name)), `"host_port":8080`, `"host_port":8081`, 1)
		cp := &PodSandboxCheckpoint{}
		if err := cp.UnmarshalCheckpoint([]byte(blob)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cp.VerifyChecksum() == nil {
			t.Errorf("%s with another host port verifies: corruption goes unnoticed", name)
		}
	}
	tcp := protocolTCP
	port := int32(80)
	blob, err := NewPodSandboxCheckpoint("default", "own", &CheckpointData{PortMappings: []*PortMapping{{Protocol: &tcp, ContainerPort: &port, HostPort: &port}}}).MarshalCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	cp := &PodSandboxCheckpoint{}
	if err := cp.UnmarshalCheckpoint(blob); err != nil || cp.VerifyChecksum() != nil {
		t.Errorf("this release's own checkpoint does not verify: %v, %v", err, cp.VerifyChecksum())
	}
}
