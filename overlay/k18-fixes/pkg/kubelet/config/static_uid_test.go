package config

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/goldens"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

func requireBaseline17(t *testing.T) {
	if b := staticuid.Baseline(); b != "1.7" {
		t.Fatalf("UID baseline %q: run with the kubelet's -ldflags (make test-tree), which stamp versions.yaml's uidBaseline 1.7", b)
	}
}

// Patched 1.8.15 keeps a static pod under the UID its sandbox runs with,
// whichever go1.8.3-era kubelet derived it (official 1.7 or 1.8, either
// rebuilt by a newer Go: goldens lines 1.7 and 1.8), and gives a pod that
// runs nowhere the official 1.7 binary's (uidBaseline 1.7). Vanilla
// derives the official 1.8 one always.
func TestStaticPodKeepsTheUIDItsSandboxRunsWith(t *testing.T) {
	requireBaseline17(t)
	defer staticuid.Record(nil)
	g17 := loadOfficial17(t)
	for _, g := range loadOfficial(t) {
		data, err := goldens.Manifest(officialDir, g)
		if err != nil {
			t.Fatal(err)
		}
		ns, name, _ := strings.Cut(g.Pod, "/")
		official17 := g17[g.File].OfficialUID
		tcs := []struct {
			node []staticuid.Sandbox
			want string
		}{
			{nil, official17},
			// Another node's pod of the same name is not this one.
			{[]staticuid.Sandbox{{UID: g.OfficialUID, Namespace: ns, Name: name + "-other", Running: true}}, official17},
			// A UID no known kubelet derives (pinned once, since removed) is not followed.
			{[]staticuid.Sandbox{{UID: "0123456789abcdef0123456789abcdef", Namespace: ns, Name: name + "-node", Running: true}}, official17},
		}
		for _, running := range []string{official17, g17[g.File].NewerGoUID, g.OfficialUID, g.NewerGoUID} {
			tcs = append(tcs, struct {
				node []staticuid.Sandbox
				want string
			}{[]staticuid.Sandbox{{UID: running, Namespace: ns, Name: name + "-node", Running: true}}, running})
		}
		for _, tc := range tcs {
			staticuid.Record(tc.node)
			pod, _, err := DecodeStaticPod(data, "/etc/kubernetes/manifests/"+g.File, types.NodeName("node"))
			if err != nil {
				t.Fatalf("%s: %v", g.File, err)
			}
			if string(pod.UID) != tc.want {
				t.Errorf("%s with sandboxes %+v: UID %s, want %s", g.File, tc.node, pod.UID, tc.want)
			}
		}
	}
}

// The preflight lists the four derivations, official 1.7 first.
func TestKeptUIDs(t *testing.T) {
	requireBaseline17(t)
	g17 := loadOfficial17(t)
	for _, g := range loadOfficial(t) {
		data, err := goldens.Manifest(officialDir, g)
		if err != nil {
			t.Fatal(err)
		}
		_, _, kept, _ := StaticPodUIDsOf(data)
		want := []string{g17[g.File].OfficialUID, g17[g.File].NewerGoUID, g.OfficialUID, g.NewerGoUID}
		if strings.Join(kept, ",") != strings.Join(want, ",") {
			t.Errorf("%s: kept %v, want %v", g.File, kept, want)
		}
	}
}

func loadOfficial17(t *testing.T) map[string]goldens.Golden {
	gs, err := goldens.Load(officialDir, "1.7")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]goldens.Golden{}
	for _, g := range gs {
		m[g.File] = g
	}
	return m
}
