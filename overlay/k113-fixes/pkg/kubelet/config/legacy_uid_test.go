package config

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"io/ioutil"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	"k8s.io/kubernetes/pkg/kubelet/config/legacyuid"
	"k8s.io/kubernetes/pkg/kubelet/legacytypes/staticuid"
)

// manifestsDir holds the test manifests (overlay legacy-types). The UIDs
// vanilla 1.12.10 itself derives are compared with this build's by the
// toolchain's hash-crosscheck, which runs both real helpers.
const manifestsDir = "../legacytypes/testdata/official"

func manifests(t testing.TB) []string {
	var out []string
	for _, pattern := range []string{"*.yaml", "*.json"} {
		m, err := filepath.Glob(filepath.Join(manifestsDir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			out = append(out, filepath.Base(f))
		}
	}
	if len(out) < 5 {
		t.Fatalf("only %d test manifests in %s", len(out), manifestsDir)
	}
	return out
}

// decodeManifest decodes a manifest into the internal pod as the file
// source does before applyDefaults.
func decodeManifest(t testing.TB, file string) *api.Pod {
	data, err := ioutil.ReadFile(filepath.Join(manifestsDir, file))
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

func requireBaseline112(t *testing.T) {
	if b := staticuid.Baseline(); b != "1.12" {
		t.Fatalf("UID baseline %q: run with the kubelet's -ldflags (make test-tree), which stamp versions.yaml's uidBaseline 1.12", b)
	}
}

// dumpRecorder is a hash.Hash that keeps what DeepHashObject writes: the
// go-spew dump the UID is the md5 of.
type dumpRecorder struct{ bytes.Buffer }

func (d *dumpRecorder) Sum(b []byte) []byte { return append(b, d.Bytes()...) }
func (d *dumpRecorder) Size() int           { return d.Len() }
func (d *dumpRecorder) BlockSize() int      { return 1 }

func dump(hashPod func(*dumpRecorder)) string {
	var d dumpRecorder
	hashPod(&d)
	return d.String()
}

var serviceLinks = regexp.MustCompile(` EnableServiceLinks:\(\*bool\)(true|false|<nil>)`)

// 1.12's dump of a pod is 1.13's without PodSpec.EnableServiceLinks, the
// one field 1.13 added to the internal Pod graph (legacy-types v112 is
// generated from the 1.12 tree); 1.13 sets it (to true) while decoding,
// so every such pod's UID changes.
func TestDump112Is113sWithoutEnableServiceLinks(t *testing.T) {
	for _, f := range manifests(t) {
		pod := decodeManifest(t, f)
		native := dump(func(d *dumpRecorder) { legacyuid.NativeHashPod(d, pod) })
		old := dump(func(d *dumpRecorder) { legacyuid.Hash112Pod(d, pod) })
		if n := len(serviceLinks.FindAllString(native, -1)); n != 1 {
			t.Fatalf("%s: 1.13's dump holds EnableServiceLinks %d times, want once:\n%s", f, n, native)
		}
		if !strings.Contains(native, " EnableServiceLinks:(*bool)true") {
			t.Errorf("%s: 1.13 did not default EnableServiceLinks to true:\n%s", f, native)
		}
		if want := serviceLinks.ReplaceAllString(native, ""); old != want {
			t.Errorf("%s: 1.12's dump\n%s\nwant 1.13's without EnableServiceLinks\n%s", f, old, want)
		}
	}
}

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// A static pod without metadata.uid that runs nowhere yet gets 1.12's UID
// (not 1.13's own), and the mirror pod's hash annotation follows it.
func TestNewStaticPodGetsThe112UID(t *testing.T) {
	requireBaseline112(t)
	defer staticuid.Record(nil)
	staticuid.Record(nil)
	for _, f := range manifests(t) {
		pod := decodeManifest(t, f)
		want := md5hex(dump(func(d *dumpRecorder) { legacyuid.Hash112Pod(d, pod) }))
		native := md5hex(dump(func(d *dumpRecorder) { legacyuid.NativeHashPod(d, pod) }))
		if want == native {
			t.Fatalf("%s: 1.12 and 1.13 derive the same UID %s; the test shows nothing", f, want)
		}
		if err := applyDefaults(pod, "/etc/kubernetes/manifests/"+f, true, types.NodeName("node")); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if string(pod.UID) != want {
			t.Errorf("%s: UID %s, 1.12 derives %s (1.13's own: %s)", f, pod.UID, want, native)
		}
		if a := pod.Annotations[kubetypes.ConfigHashAnnotationKey]; a != string(pod.UID) {
			t.Errorf("%s: %s annotation %q, UID %q", f, kubetypes.ConfigHashAnnotationKey, a, pod.UID)
		}
	}
}

// A node runs a static pod under 1.12's UID or, after vanilla 1.13, under
// 1.13's: the patched kubelet keeps it under the one its sandbox runs
// with (a running sandbox before a newer stopped one).
func TestStaticPodKeepsTheUIDItsSandboxRunsWith(t *testing.T) {
	requireBaseline112(t)
	defer staticuid.Record(nil)
	for _, f := range manifests(t) {
		pod := decodeManifest(t, f)
		ns := pod.Namespace
		if ns == "" {
			ns = "default"
		}
		uids := staticuid.UIDs(legacyuid.Derivations(pod))
		if len(uids) != 2 {
			t.Fatalf("%s: derivations %v, want 1.12's and 1.13's", f, uids)
		}
		for _, running := range uids {
			staticuid.Record([]staticuid.Sandbox{
				{UID: "pinned-elsewhere", Namespace: ns, Name: pod.Name + "-node", Created: 9},
				{UID: running, Namespace: ns, Name: pod.Name + "-node", Running: true, Created: 1},
			})
			pod := decodeManifest(t, f)
			if err := applyDefaults(pod, "/etc/kubernetes/manifests/"+f, true, types.NodeName("node")); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if string(pod.UID) != running {
				t.Errorf("%s: sandbox runs with %s, UID %s", f, running, pod.UID)
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
