package config

import (
	"encoding/json"
	"io/ioutil"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/pkg/version"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	"k8s.io/kubernetes/pkg/kubelet/config/legacyuid"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// The test manifests (overlay legacy-types) and what the vanilla kubelets
// of 1.7.5..1.20.15 derive for them (testdata/vanilla-uids.json, written
// by each release's own cmd/podhash, not by this code; none where a
// release rejects the manifest).
const (
	manifestsDir = "../legacytypes/testdata/official"
	vanillaUIDs  = "testdata/vanilla-uids.json"
)

type vanilla struct {
	Node        types.NodeName               `json:"node"`
	ManifestDir string                       `json:"manifestDir"`
	UIDs        map[string]map[string]string `json:"uids"` // release -> namespace/name -> UID
}

func readVanilla(t *testing.T) vanilla {
	data, err := ioutil.ReadFile(vanillaUIDs)
	if err != nil {
		t.Fatal(err)
	}
	var v vanilla
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", vanillaUIDs, err)
	}
	for _, r := range legacyuid.Releases {
		v.release(t, r.Name)
	}
	return v
}

// release is the vanilla release of v whose minor is minor ("1.21").
func (v vanilla) release(t *testing.T, minor string) map[string]string {
	for r, uids := range v.UIDs {
		if strings.HasPrefix(r, minor+".") {
			return uids
		}
	}
	t.Fatalf("%s: no release %s", vanillaUIDs, minor)
	return nil
}

type manifest struct {
	file, key string // key: namespace/name as in the manifest
	source    string // its path on the node
	data      []byte
}

func manifests(t *testing.T, v vanilla) []manifest {
	var out []manifest
	for _, pattern := range []string{"*.yaml", "*.json"} {
		files, err := filepath.Glob(filepath.Join(manifestsDir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := ioutil.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m := manifest{file: filepath.Base(f), source: v.ManifestDir + "/" + filepath.Base(f), data: data}
			pod := m.decode(t)
			if !pod.CreationTimestamp.IsZero() {
				// Its dump holds the node's *time.Location, whose
				// unexported lookup cache depends on what the process
				// looked up before: another process (the helper that
				// wrote the vanilla UIDs) need not derive the same UID.
				continue
			}
			ns := pod.Namespace
			if ns == "" {
				ns = "default"
			}
			m.key = ns + "/" + pod.Name
			if _, ok := v.release(t, thisRelease(t))[m.key]; !ok {
				// This release rejects it (1.10: kube-proxy's privileged
				// container, which the helper forbids): no UID to keep.
				continue
			}
			out = append(out, m)
		}
	}
	if len(out) < 5 {
		t.Fatalf("only %d test manifests in %s", len(out), manifestsDir)
	}
	return out
}

// decode decodes the manifest into the internal pod as the file source
// does before applyDefaults.
func (m manifest) decode(t *testing.T) *api.Pod {
	data, err := utilyaml.ToJSON(m.data)
	if err != nil {
		t.Fatalf("%s: %v", m.file, err)
	}
	obj, err := runtime.Decode(legacyscheme.Codecs.UniversalDecoder(), data)
	if err != nil {
		t.Fatalf("%s: %v", m.file, err)
	}
	return obj.(*api.Pod)
}

// thisRelease is this build's minor, as the kubelet's -ldflags stamp it.
func thisRelease(t *testing.T) string {
	v := version.Get()
	if v.Major == "" || v.Minor == "" {
		t.Fatal("no release stamped: run with the kubelet's -ldflags (make test-tree)")
	}
	return v.Major + "." + strings.TrimSuffix(v.Minor, "+")
}

// Every vanilla release's UID for every test manifest is among the
// derivations this build knows, under that release's name, and the one a
// new pod gets comes first.
func TestDerivationsAreTheVanillaReleasesUIDs(t *testing.T) {
	v := readVanilla(t)
	own := thisRelease(t)
	for _, m := range manifests(t, v) {
		ds := legacyuid.Derivations(m.decode(t))
		if want := v.release(t, first(t))[m.key]; ds[0].UID != want {
			t.Errorf("%s: first derivation %s (%s), vanilla %s derives %s", m.file, ds[0].UID, ds[0].Name, first(t), want)
		}
		if want := v.release(t, own)[m.key]; !contains(ds, want) {
			t.Errorf("%s: vanilla %s (this release) derives %s, not among %v", m.file, own, want, ds)
		}
		for _, r := range legacyuid.Releases {
			want, ok := v.release(t, r.Name)[m.key]
			if !ok {
				continue // that release rejects the manifest
			}
			var got []string
			for _, d := range ds {
				if d.UID == want {
					got = append(got, d.Name)
				}
			}
			if len(got) == 0 {
				t.Errorf("%s: vanilla %s derives %s, not among %v", m.file, r.Name, want, ds)
			}
		}
	}
}

// A static pod that runs nowhere yet gets this release's own UID (as the
// vanilla kubelet derives it), or the UID baseline's where versions.yaml
// sets one, and the mirror pod's hash annotation
// follows it.
func TestNewStaticPodGetsThisReleasesUID(t *testing.T) {
	v := readVanilla(t)
	own := v.release(t, first(t))
	defer staticuid.Record(nil)
	staticuid.Record(nil)
	for _, m := range manifests(t, v) {
		pod := m.decode(t)
		if err := applyDefaults(pod, m.source, true, v.Node); err != nil {
			t.Fatalf("%s: %v", m.file, err)
		}
		if string(pod.UID) != own[m.key] {
			t.Errorf("%s: UID %s, vanilla derives %s", m.file, pod.UID, own[m.key])
		}
		if a := pod.Annotations[kubetypes.ConfigHashAnnotationKey]; a != string(pod.UID) {
			t.Errorf("%s: %s annotation %q, UID %q", m.file, kubetypes.ConfigHashAnnotationKey, a, pod.UID)
		}
	}
}

// A node runs a static pod under the UID whichever release of the road (Releases) started
// it derived: this build keeps it under the one its sandbox runs with
// (a running sandbox before a newer stopped one). For every test manifest
// some release derives another UID than this one: the vanilla kubelet
// replaces the pod there.
func TestStaticPodKeepsTheUIDItsSandboxRunsWith(t *testing.T) {
	v := readVanilla(t)
	own := v.release(t, thisRelease(t))
	defer staticuid.Record(nil)
	differs := map[string]int{}
	for release, other := range v.UIDs {
		if !known(release) {
			continue // 1.12.10: 1.13.12's baseline, known there only
		}
		for _, m := range manifests(t, v) {
			want, ok := other[m.key]
			if !ok {
				continue // that release rejects the manifest
			}
			if want != own[m.key] {
				differs[m.file]++
			}
			name := m.decode(t).Name + "-" + string(v.Node)
			ns := strings.Split(m.key, "/")[0]
			staticuid.Record([]staticuid.Sandbox{
				{UID: "a-newer-stopped-sandbox", Name: name, Namespace: ns, Created: 2},
				{UID: want, Name: name, Namespace: ns, Running: true, Created: 1},
			})
			pod := m.decode(t)
			if err := applyDefaults(pod, m.source, true, v.Node); err != nil {
				t.Fatalf("%s: %v", m.file, err)
			}
			if string(pod.UID) != want {
				t.Errorf("%s: its sandbox runs with vanilla %s's UID %s, the kubelet gave it %s", m.file, release, want, pod.UID)
			}
		}
	}
	for _, m := range manifests(t, v) {
		if differs[m.file] == 0 {
			t.Errorf("%s: every release derives this one's UID: the test shows nothing", m.file)
		}
	}
}

// first is the release whose UID a pod that runs nowhere yet gets.
func first(t *testing.T) string {
	if b := staticuid.Baseline(); b != "" {
		return b
	}
	return thisRelease(t)
}

func contains(ds []staticuid.Derivation, uid string) bool {
	for _, d := range ds {
		if d.UID == uid {
			return true
		}
	}
	return false
}

// known says whether this build knows vanilla release's derivation (1.17
// derives as 1.16 does, 1.20 as 1.19).
func known(release string) bool {
	for _, r := range legacyuid.Releases {
		if strings.HasPrefix(release, r.Name+".") || (r.Name == "1.16" && strings.HasPrefix(release, "1.17.")) || (r.Name == "1.19" && strings.HasPrefix(release, "1.20.")) {
			return true
		}
	}
	return false
}
