package config

import (
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/api/v1"
	"k8s.io/kubernetes/pkg/capabilities"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/goldens"
)

// officialDir holds test manifests and, under 1.7/, what the official
// go1.8.3-built 1.7 kubelet derives for them (package goldens).
const officialDir = "../legacytypes/testdata/official"

func loadOfficial(t *testing.T) []goldens.Golden {
	gs, err := goldens.Load(officialDir, "1.7")
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// The goldens were made with TZ=UTC (a Local without zone tables) and
// --allow-privileged (kube-proxy's manifest is privileged).
func TestMain(m *testing.M) {
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	os.Setenv("TZ", "UTC")
	if time.Local.String() != "UTC" {
		panic("TZ=UTC did not take: the time zone was loaded before TestMain")
	}
	os.Exit(m.Run())
}

// Both variants of this build derive for a static pod without
// metadata.uid the UID the official binary derives, and write the
// official binary's container hashes (restored released behaviour: the
// tree as released, built by Go >= 1.9, derives NewerGoUID and writes
// NewerGoHash instead).
func TestStaticPodUIDAndHashesAreTheOfficialBinarys(t *testing.T) {
	for _, g := range loadOfficial(t) {
		data, err := goldens.Manifest(officialDir, g)
		if err != nil {
			t.Fatal(err)
		}
		pod, _, err := DecodeStaticPod(data, "/etc/kubernetes/manifests/"+g.File, types.NodeName("node"))
		if err != nil {
			t.Fatalf("%s: %v", g.File, err)
		}
		if string(pod.UID) != g.OfficialUID {
			t.Errorf("%s: UID %s, the official 1.7 binary derives %s (Go >= 1.9 without the patch: %s)", g.File, pod.UID, g.OfficialUID, g.NewerGoUID)
		}
		// The newer-Go derivation, which patched kubelets keep a running
		// pod under, is still what the unpatched tree derives.
		if newerGo, _, _, _ := StaticPodUIDsOf(data); newerGo != g.NewerGoUID {
			t.Errorf("%s: newer-Go UID %s, the tree as released derives %s", g.File, newerGo, g.NewerGoUID)
		}
		n := 0
		for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range cs {
				n++
				want, ok := g.Containers[cs[i].Name]
				if !ok {
					t.Fatalf("%s: no golden for container %s", g.File, cs[i].Name)
				}
				if got := kubecontainer.HashContainer(&cs[i]); got != want.OfficialHash {
					t.Errorf("%s/%s: hash %d, the official 1.7 binary writes %d (Go >= 1.9 without the patch: %d)", g.File, cs[i].Name, got, want.OfficialHash, want.NewerGoHash)
				}
			}
		}
		if n != len(g.Containers) {
			t.Errorf("%s: %d containers, %d goldens", g.File, n, len(g.Containers))
		}
	}
}
