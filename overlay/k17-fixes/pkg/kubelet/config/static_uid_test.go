package config

import (
	"io/ioutil"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// A node that ran this toolchain's earlier 1.7.5 builds (Go >= 1.9) runs
// its static pods under the newer-Go UIDs: patched 1.7.5 keeps each pod
// under the UID its sandbox runs with, and gives a pod that runs nowhere
// the official binary's. (Vanilla derives the official one always: the
// e2e's negative control shows it replaces such a pod.)
func TestStaticPodKeepsTheUIDItsSandboxRunsWith(t *testing.T) {
	defer staticuid.Record(nil)
	for _, g := range loadOfficial(t) {
		data, err := ioutil.ReadFile(filepath.Join(officialDir, g.File))
		if err != nil {
			t.Fatal(err)
		}
		ns, name, _ := strings.Cut(g.Pod, "/")
		for _, tc := range []struct {
			node []staticuid.Sandbox
			want string
		}{
			{nil, g.OfficialUID},
			{[]staticuid.Sandbox{{UID: g.NewerGoUID, Namespace: ns, Name: name + "-node", Running: true}}, g.NewerGoUID},
			{[]staticuid.Sandbox{{UID: g.OfficialUID, Namespace: ns, Name: name + "-node", Running: true}}, g.OfficialUID},
			// Another node's pod of the same name is not this one.
			{[]staticuid.Sandbox{{UID: g.NewerGoUID, Namespace: ns, Name: name + "-other", Running: true}}, g.OfficialUID},
		} {
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
