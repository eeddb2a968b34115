package legacyhash_test

import (
	"encoding/json"
	"io/ioutil"
	"path/filepath"
	"testing"

	"k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/capabilities"
	"k8s.io/kubernetes/pkg/kubelet/config"
	"k8s.io/kubernetes/pkg/kubelet/container/legacyhash"
)

// What the official go1.8.3-built 1.7 kubelet writes in the hash label of
// each container of the test manifests (goldens.json, `make uid-goldens`:
// vanilla 1.7.5's own dumps rewritten into go1.8.3's layout).
const officialDir = "../../legacytypes/testdata/official"

type golden struct {
	File       string `json:"file"`
	Containers map[string]struct {
		OfficialHash uint64 `json:"officialHash"`
		NewerGoHash  uint64 `json:"newerGoHash"`
	} `json:"containers"`
}

// Patched 1.9.11 writes the official 1.7 hash (for quantities.yaml's app,
// an inf.Dec quantity, it differs from what a 1.7 built by Go >= 1.9
// writes) and accepts both.
func TestHashIsTheOfficial17s(t *testing.T) {
	if legacyhash.Baseline() != "1.7" {
		t.Fatalf("hash baseline %q: run with the kubelet's -ldflags (make test-tree)", legacyhash.Baseline())
	}
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	data, err := ioutil.ReadFile(filepath.Join(officialDir, "goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gs []golden
	if err := json.Unmarshal(data, &gs); err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, g := range gs {
		manifest, err := ioutil.ReadFile(filepath.Join(officialDir, g.File))
		if err != nil {
			t.Fatal(err)
		}
		pod, _, err := config.DecodeStaticPod(manifest, "/etc/kubernetes/manifests/"+g.File, types.NodeName("node"))
		if err != nil {
			t.Fatalf("%s: %v", g.File, err)
		}
		for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range cs {
				c, want := &cs[i], g.Containers[cs[i].Name]
				if got := legacyhash.Hash(c); got != want.OfficialHash {
					t.Errorf("%s/%s: writes %d, the official 1.7 binary %d", g.File, c.Name, got, want.OfficialHash)
				}
				if got, _ := legacyhash.HashAs(c, "1.7+newergo"); got != want.NewerGoHash {
					t.Errorf("%s/%s: 1.7+newergo %d, 1.7.5 built by Go 1.26 writes %d", g.File, c.Name, got, want.NewerGoHash)
				}
				if !legacyhash.Accepts(c, want.OfficialHash) || !legacyhash.Accepts(c, want.NewerGoHash) {
					t.Errorf("%s/%s: does not accept both 1.7 hashes", g.File, c.Name)
				}
				if want.OfficialHash != want.NewerGoHash {
					differ++
				}
			}
		}
	}
	if differ == 0 {
		t.Error("no golden container whose official hash differs from the newer-Go one: the inf.Dec case is not covered")
	}
}
