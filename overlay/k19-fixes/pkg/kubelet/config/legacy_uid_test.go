package config

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io/ioutil"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	"k8s.io/kubernetes/pkg/kubelet/config/legacyuid"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/goldens"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// officialDir holds test manifests and, under 1.7/, what the official
// go1.8.3-built 1.7 kubelet derives for them (package goldens).
const officialDir = "../legacytypes/testdata/official"

func loadOfficial(t testing.TB) []goldens.Golden {
	gs, err := goldens.Load(officialDir, "1.7")
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// official18 is what the official 1.8 binary (and 1.8 built by a newer
// Go) derives for each manifest, by file (goldens line 1.8).
func official18(t testing.TB) map[string]goldens.Golden {
	gs, err := goldens.Load(officialDir, "1.8")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]goldens.Golden{}
	for _, g := range gs {
		m[g.File] = g
	}
	return m
}

// The goldens were made with TZ=UTC (a Local without zone tables).
func TestMain(m *testing.M) {
	os.Setenv("TZ", "UTC")
	if time.Local.String() != "UTC" {
		panic("TZ=UTC did not take: the time zone was loaded before TestMain")
	}
	os.Exit(m.Run())
}

// decodeManifest decodes a manifest into the internal pod as the file
// source does before applyDefaults.
func decodeManifest(t testing.TB, file string) *api.Pod {
	data, err := ioutil.ReadFile(filepath.Join(officialDir, file))
	if err != nil {
		t.Fatal(err)
	}
	if data, err = utilyaml.ToJSON(data); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	obj, err := runtime.Decode(legacyscheme.Codecs.UniversalDecoder(), data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return obj.(*api.Pod)
}

func requireBaseline17(t *testing.T) {
	if b := staticuid.Baseline(); b != "1.7" {
		t.Fatalf("UID baseline %q: run with the kubelet's -ldflags (make test-tree), which stamp versions.yaml's uidBaseline 1.7", b)
	}
}

// A static pod without metadata.uid that runs nowhere yet gets the UID the
// official 1.7 binary derives, and the mirror pod's hash annotation
// follows it.
func TestStaticPodUIDIsTheOfficial17s(t *testing.T) {
	requireBaseline17(t)
	for _, g := range loadOfficial(t) {
		pod := decodeManifest(t, g.File)
		if err := applyDefaults(pod, "/etc/kubernetes/manifests/"+g.File, true, types.NodeName("node")); err != nil {
			t.Fatalf("%s: %v", g.File, err)
		}
		if string(pod.UID) != g.OfficialUID {
			t.Errorf("%s: UID %s, the official 1.7 binary derives %s", g.File, pod.UID, g.OfficialUID)
		}
		if a := pod.Annotations[kubetypes.ConfigHashAnnotationKey]; a != string(pod.UID) {
			t.Errorf("%s: %s annotation %q, UID %q", g.File, kubetypes.ConfigHashAnnotationKey, a, pod.UID)
		}
	}
}

// newerUIDs is what the vanilla kubelets of 1.10.13, 1.11.10 and 1.12.10
// derive for the test manifests, by namespace/name (testdata, written by
// each release's own cmd/podhash; none where a release rejects one).
func newerUIDs(t testing.TB) map[string]map[string]string {
	data, err := ioutil.ReadFile("testdata/newer-uids.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		UIDs map[string]map[string]string `json:"uids"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("testdata/newer-uids.json: %v", err)
	}
	byMinor := map[string]map[string]string{}
	for release, uids := range v.UIDs {
		byMinor[release[:strings.LastIndex(release, ".")]] = uids
	}
	// Every release of the file is known, and only those.
	if len(byMinor) != len(legacyuid.Newer) {
		t.Fatalf("testdata/newer-uids.json has %d releases, legacyuid.Newer %d", len(byMinor), len(legacyuid.Newer))
	}
	for _, r := range legacyuid.Newer {
		if byMinor[r.Name] == nil {
			t.Fatalf("testdata/newer-uids.json: no release %s", r.Name)
		}
	}
	return byMinor
}

// The derivations a patched 1.9.11 knows: official 1.7 first, 1.7 built by
// Go >= 1.9, official 1.8, 1.8 built by Go >= 1.9, 1.9's own, then those
// of vanilla 1.10, 1.11 and 1.12. The native one differs from all of them
// for every manifest: vanilla 1.9.11 replaces every such pod a 1.7 or 1.8
// kubelet started (the e2e's negative control shows it on a node), or a
// switch back from 1.10 to 1.12.
func TestDerivations(t *testing.T) {
	requireBaseline17(t)
	g18 := official18(t)
	newer := newerUIDs(t)
	for _, g := range loadOfficial(t) {
		pod := decodeManifest(t, g.File)
		ds := legacyuid.Derivations(pod)
		h := md5.New()
		legacyuid.NativeHashPod(h, pod)
		native := hex.EncodeToString(h.Sum(nil))
		want := []string{g.OfficialUID, g.NewerGoUID, g18[g.File].OfficialUID, g18[g.File].NewerGoUID, native}
		names := []string{"official 1.7", "1.7 newer Go", "official 1.8", "1.8 newer Go", "native"}
		for _, r := range legacyuid.Newer {
			uid, ok := newer[r.Name][g.Pod]
			if !ok {
				// Vanilla r rejects the manifest: this build's projection
				// stands in (no vanilla UID to compare).
				uid = ds[len(want)].UID
			}
			want = append(want, uid)
			names = append(names, "vanilla "+r.Name)
		}
		if got := staticuid.UIDs(ds); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: derivations %+v, want %s: %v", g.File, ds, strings.Join(names, ", "), want)
		}
		if !strings.HasPrefix(ds[0].Name, "official 1.7") {
			t.Errorf("%s: first derivation %q", g.File, ds[0].Name)
		}
	}
}

// A node runs a static pod under whichever derivation the kubelet that
// started it used (1.7 to 1.12): the patched kubelet keeps it there.
func TestStaticPodKeepsTheUIDItsSandboxRunsWith(t *testing.T) {
	requireBaseline17(t)
	defer staticuid.Record(nil)
	g18 := official18(t)
	newer := newerUIDs(t)
	for _, g := range loadOfficial(t) {
		ns, name, _ := strings.Cut(g.Pod, "/")
		pod := decodeManifest(t, g.File)
		h := md5.New()
		legacyuid.NativeHashPod(h, pod)
		native := hex.EncodeToString(h.Sum(nil))
		runs := []string{g.OfficialUID, g.NewerGoUID, g18[g.File].OfficialUID, g18[g.File].NewerGoUID, native}
		for _, r := range legacyuid.Newer {
			if uid, ok := newer[r.Name][g.Pod]; ok {
				runs = append(runs, uid)
			}
		}
		for _, running := range runs {
			staticuid.Record([]staticuid.Sandbox{
				{UID: "pinned-elsewhere", Namespace: ns, Name: name + "-node", Created: 9},
				{UID: running, Namespace: ns, Name: name + "-node", Running: true, Created: 1},
			})
			pod := decodeManifest(t, g.File)
			if err := applyDefaults(pod, "/etc/kubernetes/manifests/"+g.File, true, types.NodeName("node")); err != nil {
				t.Fatalf("%s: %v", g.File, err)
			}
			if string(pod.UID) != running {
				t.Errorf("%s: sandbox runs with %s, UID %s", g.File, running, pod.UID)
			}
		}
	}
}

// A pinned metadata.uid is kept as it is.
func TestStaticPodPinnedUIDKept(t *testing.T) {
	pod := decodeManifest(t, "minimal.yaml")
	pod.UID = "pinned"
	if err := applyDefaults(pod, "/m/minimal.yaml", true, "node-a"); err != nil || pod.UID != "pinned" {
		t.Fatalf("UID %q, err %v", pod.UID, err)
	}
}

func benchmarkUID(b *testing.B, fn func(*api.Pod) string) {
	pod := decodeManifest(b, "web.json")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fn(pod)
	}
}

// Patched (every derivation: two projections onto 1.7's graph and the
// native dump) vs vanilla (the native dump) for one pod, as applyDefaults
// does it.
func BenchmarkStaticPodUIDPatched(b *testing.B) {
	benchmarkUID(b, func(p *api.Pod) string { return legacyuid.Derivations(p)[0].UID })
}

func BenchmarkStaticPodUIDVanilla(b *testing.B) {
	benchmarkUID(b, func(p *api.Pod) string {
		h := md5.New()
		legacyuid.NativeHashPod(h, p)
		return hex.EncodeToString(h.Sum(nil))
	})
}
