package config

import (
	"crypto/md5"
	"encoding/hex"
	"io/ioutil"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	"k8s.io/kubernetes/pkg/kubelet/config/legacyuid"
)

// uidGolden are the UIDs the real kubelets derive for the manifests in
// testdata/legacyuid (no metadata.uid), read from each release's own
// podhash helper (--source static): v17 from 1.7.5's, native from vanilla
// 1.9.11's. The node name and path do not enter them: DeepHashObject
// resets the hasher after applyDefaults wrote "host:"/"file:" into it.
var uidGolden = []struct{ file, v17, native string }{
	{"kube-proxy.yaml", "60b65187a0d768f43580dd9162a55be9", "55738394aff08968a93b4b3a49db2f10"},
	{"etcd.yaml", "9452738e2443e26d66f650f3fdfed8df", "b80cc3eeaf66d763e47e98ef891953bb"},
	{"web.json", "b968fe9920deb2775e25fae55e5af1d0", "c424c59921d965e0e740db0aa0057f3e"},
	{"affinity.yaml", "f063fcca9b6175dab834199fc97e330f", "fc262fa86f5fc649524140bde47db884"},
	{"minimal.yaml", "5e1d6bcb22bf872dedd040001e4c0a2e", "2f7887eab9327ea18be36ee7e9c576a9"},
}

// decodeManifest decodes a manifest into the internal pod as the file
// source does before applyDefaults.
func decodeManifest(t testing.TB, file string) *api.Pod {
	data, err := ioutil.ReadFile(filepath.Join("testdata", "legacyuid", file))
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

// The UID this kubelet derives for a static pod without metadata.uid is
// the one 1.7 derives, and the mirror pod's hash annotation follows it.
func TestStaticPodUIDIsTheBaselines(t *testing.T) {
	for _, g := range uidGolden {
		pod := decodeManifest(t, g.file)
		if err := applyDefaults(pod, "/etc/kubernetes/manifests/"+g.file, true, types.NodeName("node-a")); err != nil {
			t.Fatalf("%s: %v", g.file, err)
		}
		if string(pod.UID) != g.v17 {
			t.Errorf("%s: UID %s, 1.7.5 derives %s (vanilla 1.9.11: %s)", g.file, pod.UID, g.v17, g.native)
		}
		if a := pod.Annotations[kubetypes.ConfigHashAnnotationKey]; a != string(pod.UID) {
			t.Errorf("%s: %s annotation %q, UID %q", g.file, kubetypes.ConfigHashAnnotationKey, a, pod.UID)
		}
	}
}

// The native dump is still what vanilla 1.9.11 hashes, so the goldens
// above show a real difference (and catch a change of the native path).
func TestNativePodHashIsVanillas(t *testing.T) {
	for _, g := range uidGolden {
		pod := decodeManifest(t, g.file)
		h := md5.New()
		legacyuid.NativeHashPod(h, pod)
		if got := hex.EncodeToString(h.Sum(nil)); got != g.native {
			t.Errorf("%s: native %s, vanilla 1.9.11 derives %s", g.file, got, g.native)
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

// Patched (projection onto 1.7's graph, then the dump) vs vanilla (the
// dump) UID derivation of one pod, as applyDefaults does it.
func BenchmarkStaticPodUIDPatched(b *testing.B) {
	benchmarkUID(b, func(p *api.Pod) string {
		h := md5.New()
		legacyuid.DeepHashPod(h, p)
		return hex.EncodeToString(h.Sum(nil))
	})
}

func BenchmarkStaticPodUIDVanilla(b *testing.B) {
	benchmarkUID(b, func(p *api.Pod) string {
		h := md5.New()
		legacyuid.NativeHashPod(h, p)
		return hex.EncodeToString(h.Sum(nil))
	})
}
