package config

import (
	"os"
	"testing"
	"time"

	"k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/capabilities"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/goldens"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// officialDir holds test manifests and, under 1.8/, what the official
// go1.8.3-built 1.8 kubelet derives for them (package goldens).
const officialDir = "../legacytypes/testdata/official"

// officialUIDOf is the official UID of line's goldens for file.
func officialUIDOf(t *testing.T, line, file string) string {
	gs, err := goldens.Load(officialDir, line)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if g.File == file {
			return g.OfficialUID
		}
	}
	t.Fatalf("no %s golden for %s", line, file)
	return ""
}

func loadOfficial(t *testing.T) []goldens.Golden {
	gs, err := goldens.Load(officialDir, "1.8")
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
// metadata.uid the UID the official binary derives, and the official
// binary's container hashes (OfficialHash: vanilla's HashContainer,
// patched's HashContainerNative) (restored released behaviour: the tree
// as released, built by Go >= 1.9, derives NewerGoUID and NewerGoHash
// instead).
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
		// A fixes series with a UID baseline gives a pod that runs nowhere
		// the baseline's official UID instead (k18-fixes: 1.7's).
		want, whose := g.OfficialUID, "the official 1.8 binary"
		if b := staticuid.Baseline(); b != "" {
			want, whose = officialUIDOf(t, b, g.File), "the official "+b+" binary (uidBaseline)"
		}
		if string(pod.UID) != want {
			t.Errorf("%s: UID %s, %s derives %s (Go >= 1.9 without the patch: %s)", g.File, pod.UID, whose, want, g.NewerGoUID)
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
				if got := kubecontainer.OfficialHash(&cs[i]); got != want.OfficialHash {
					t.Errorf("%s/%s: hash %d, the official 1.8 binary writes %d (Go >= 1.9 without the patch: %d)", g.File, cs[i].Name, got, want.OfficialHash, want.NewerGoHash)
				}
			}
		}
		if n != len(g.Containers) {
			t.Errorf("%s: %d containers, %d goldens", g.File, n, len(g.Containers))
		}
	}
}
