package legacyhash_test

import (
	"testing"

	"k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/capabilities"
	"k8s.io/kubernetes/pkg/kubelet/config"
	"k8s.io/kubernetes/pkg/kubelet/container/legacyhash"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/goldens"
)

// What the official go1.8.3-built 1.7 kubelet writes in the hash label of
// each container of the test manifests (package goldens, line 1.7).
const officialDir = "../../legacytypes/testdata/official"

// Patched 1.9.11 writes the official 1.7 hash (for quantities.yaml's app,
// an inf.Dec quantity, it differs from what a 1.7 built by Go >= 1.9
// writes) and accepts both.
func TestHashIsTheOfficial17s(t *testing.T) {
	if legacyhash.Baseline() != "1.7" {
		t.Fatalf("hash baseline %q: run with the kubelet's -ldflags (make test-tree)", legacyhash.Baseline())
	}
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	gs, err := goldens.Load(officialDir, "1.7")
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, g := range gs {
		manifest, err := goldens.Manifest(officialDir, g)
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

// The official 1.8 binary's hashes (go1.8.3, line 1.8 of the goldens: 1.8.15's
// own dumps rewritten) and 1.8 built by a newer Go are accepted as such,
// so a switch from either keeps its containers.
func TestAcceptsTheOfficial18s(t *testing.T) {
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	gs, err := goldens.Load(officialDir, "1.8")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		manifest, err := goldens.Manifest(officialDir, g)
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
				if got, _ := legacyhash.HashAs(c, "1.8"); got != want.OfficialHash {
					t.Errorf("%s/%s: 1.8 %d, the official 1.8 binary writes %d", g.File, c.Name, got, want.OfficialHash)
				}
				if got, _ := legacyhash.HashAs(c, "1.8+newergo"); got != want.NewerGoHash {
					t.Errorf("%s/%s: 1.8+newergo %d, 1.8.15 built by Go 1.26 writes %d", g.File, c.Name, got, want.NewerGoHash)
				}
				if !legacyhash.Accepts(c, want.OfficialHash) || !legacyhash.Accepts(c, want.NewerGoHash) {
					t.Errorf("%s/%s: does not accept both 1.8 hashes", g.File, c.Name)
				}
			}
		}
	}
}
