// Command podhash prints, for every container of every pod in a file or
// directory, the container hash this kubelet build writes in the
// container's hash label. Pods are decoded as this release's kubelet has
// them:
//
//   - --source api (the default): as the API server sends them (kubectl
//     get pods -o json|yaml, a Pod, a PodList or List): this release's v1
//     types (unknown fields dropped) and v1 defaulting, no validation;
//   - --source static: as the kubelet's --pod-manifest-path reads them
//     (pkg/kubelet/config): internal decoding, defaulting, static pod name
//     and UID (from --node and the manifest's path on the node), and
//     validation under --allow-privileged and --feature-gates. A pod the
//     kubelet would reject is a result ("rejected"), not an error.
//
// Hashes come from this build's HashContainer. Added to the tree by the
// toolchain (overlay) for `make hash` and `make preflight`; it is not part
// of kubelet.
//
//	podhash [--source api|static] [--node NAME] [--pod-manifest-path PATH]
//	        [--allow-privileged] [--stored FILE] [--feature-gates G=true,...] PODS
//	podhash --dump [--node NAME] [--pod-manifest-path PATH] PODS
//
// --dump prints, for each static pod without metadata.uid, the go-spew
// text this release built by Go >= 1.9 hashes into its UID, as
// {"pod","uid","dump"} (1.7 only: the input of the official-derivation
// goldens, docs/go-fidelity.md).
//
// PODS is a file (JSON or YAML, several documents allowed) or, for static
// pods, a directory read as the kubelet reads one. Output: one JSON object
// per container, init containers first, in input order. Exit 2 on input
// that cannot be read or parsed, naming the file and document.
//
// This file is the same for every release; release.go (from the release's
// build series) names the few things that differ between releases.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/capabilities"
	"k8s.io/kubernetes/pkg/kubelet/config"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
)

// accepts says whether this build keeps a container whose stored hash is
// stored. Vanilla: only its own hash. A fixes series may replace it.
var accepts = func(c *container, stored uint64) bool { return kubecontainer.HashContainer(c) == stored }

func main() {
	source := flag.String("source", "api", "api: pods as the API server sends them; static: manifests as --pod-manifest-path reads them")
	node := flag.String("node", "node", "static: the node name (--hostname-override); it enters the static pod's name and derived UID")
	nodePath := flag.String("pod-manifest-path", "", "static: the path of PODS on the node (a manifest file, or the kubelet's --pod-manifest-path directory); it enters the derived UID (default: PODS as given)")
	allowPrivileged := flag.Bool("allow-privileged", defaultAllowPrivileged, "static: the kubelet's --allow-privileged")
	stored := flag.String("stored", "", "file of '<namespace>/<pod>/<container> <hash>' lines: also report whether each hash is accepted")
	gates := flag.String("feature-gates", "", "feature gates to enable, as on the kubelet command line")
	dump := flag.Bool("dump", false, "static: print each pod's UID dump as this release built by Go >= 1.9 hashes it, instead of hashes")
	flag.Parse()
	if *dump {
		*source = "static"
	}
	if flag.NArg() != 1 {
		fail("usage: podhash [--source api|static] [--node NAME] [--pod-manifest-path PATH] [--allow-privileged] [--stored FILE] [--feature-gates ...] PODS")
	}
	if *source != "api" && *source != "static" {
		fail("--source %q: use api or static", *source)
	}
	static := *source == "static"
	if *gates != "" {
		if err := setFeatureGates(*gates); err != nil {
			fail("--feature-gates: %v", err)
		}
	}
	setAllowPrivileged(*allowPrivileged)
	// The kubelet has logged, and so loaded its Local time zone, before it
	// reads a manifest: a dump that holds Local shows the loaded zone.
	_ = time.Local.String()
	want, err := readStored(*stored)
	if err != nil {
		fail("%v", err)
	}
	path := flag.Arg(0)
	if *nodePath == "" {
		*nodePath = path
	}
	docs, err := readInput(path, *nodePath, static)
	if err != nil {
		fail("%v", err)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for _, d := range docs {
		var decoded *pod
		var newerGo, uidDump, uidCaveat string
		var uidsKept []string
		if static {
			var parsed bool
			decoded, parsed, err = config.DecodeStaticPod(d.data, d.source, types.NodeName(*node))
			newerGo, uidDump, uidsKept, uidCaveat = staticPodUIDs(d.data, d.source, types.NodeName(*node))
			if *dump {
				if err != nil {
					fail("%s: %s: %v", d.file, d.pos, err)
				}
				if uidDump == "" {
					fail("%s: %s: no UID dump (the pod sets metadata.uid, or this release keeps its Go's layout)", d.file, d.pos)
				}
				enc.Encode(podDump{Pod: d.namespace() + "/" + d.name, UID: newerGo, Dump: uidDump, Containers: containerDumps(decoded)})
				continue
			}
			if err != nil && parsed {
				// Decoded, then refused by defaulting or validation: the
				// kubelet would log it and never run the pod.
				for _, c := range d.containers() {
					enc.Encode(result{Pod: d.namespace() + "/" + d.name, Container: c.name, Init: c.init, Source: *source, Rejected: err.Error()})
				}
				continue
			}
		} else {
			decoded, err = decodeAPIPod(d.data)
		}
		if err != nil {
			fail("%s: %s: %v", d.file, d.pos, err)
		}
		raw := d.containers()
		emit := func(c *container, init bool) {
			r := result{Pod: d.namespace() + "/" + d.name, Container: c.Name, Init: init, Source: *source,
				Hash: kubecontainer.HashContainer(c), UID: string(decoded.UID), UIDDerived: static && !d.hasUID,
				UIDsKept: uidsKept, UIDCaveat: uidCaveat}
			if newerGo != r.UID {
				r.UIDNewerGo = newerGo
			}
			if h, ok := want[r.Pod+"/"+r.Container]; ok {
				a := accepts(c, h)
				r.Accepted = &a
			}
			for _, rc := range raw {
				if rc.name == c.Name && rc.init == init {
					r.Dropped = dropped(rc.spec, c)
				}
			}
			enc.Encode(r)
		}
		for i := range decoded.Spec.InitContainers {
			emit(&decoded.Spec.InitContainers[i], true)
		}
		for i := range decoded.Spec.Containers {
			emit(&decoded.Spec.Containers[i], false)
		}
	}
}

// podDump is what --dump prints for a pod: its UID dump and each
// container's hash dump, as this release built by Go >= 1.9 hashes them.
type podDump struct {
	Pod        string            `json:"pod"`
	UID        string            `json:"uid"`
	Dump       string            `json:"dump"`
	Containers map[string]string `json:"containers"`
}

func containerDumps(p *pod) map[string]string {
	out := map[string]string{}
	for _, cs := range [][]container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			var r dumpRecorder
			// As HashContainer hashes it: the container by value.
			hashutil.DeepHashObject(&r, cs[i])
			out[cs[i].Name] = r.String()
		}
	}
	return out
}

// dumpRecorder is a hash.Hash that keeps what is written to it: the text
// hashutil.DeepHashObject hashes.
type dumpRecorder struct{ bytes.Buffer }

func (d *dumpRecorder) Sum(b []byte) []byte { return append(b, d.Bytes()...) }
func (d *dumpRecorder) Size() int           { return d.Len() }
func (d *dumpRecorder) BlockSize() int      { return 1 }

func setAllowPrivileged(allow bool) {
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: allow})
}

// decodeAPIPod decodes a pod as this kubelet receives it from the API
// server: into its v1 types (fields it lacks are dropped) with v1
// defaulting, without the static pod path's validation.
func decodeAPIPod(data []byte) (*pod, error) {
	p := &pod{}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, err
	}
	scheme.Default(p)
	return p, nil
}

type result struct {
	Pod        string `json:"pod"`
	Container  string `json:"container"`
	Init       bool   `json:"init"`
	Source     string `json:"source"`
	Hash       uint64 `json:"hash"`
	UID        string `json:"uid"`
	UIDDerived bool   `json:"uidDerived"`
	// UIDNewerGo is what this release built by Go >= 1.9 without the build
	// series' restoring patch derives, where it differs from UID.
	UIDNewerGo string `json:"uidNewerGo,omitempty"`
	// UIDsKept are the UIDs this build keeps a running pod under, UID
	// first (empty: only UID).
	UIDsKept []string `json:"uidsKept,omitempty"`
	// UIDCaveat says why the official binary's UID may differ from UID.
	UIDCaveat string `json:"uidCaveat,omitempty"`
	Accepted  *bool  `json:"accepted,omitempty"`
	// Rejected is why this release's kubelet would refuse the pod.
	Rejected string `json:"rejected,omitempty"`
	// Dropped lists the container's fields this release's types do not
	// have: the kubelet neither hashes nor enforces them.
	Dropped []string `json:"dropped,omitempty"`
}

// dropped lists the fields set in the input container that do not survive
// decoding into this release's types, as JSON paths.
func dropped(in map[string]interface{}, c *container) []string {
	data, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var out map[string]interface{}
	if json.Unmarshal(data, &out) != nil {
		return nil
	}
	seen := map[string]bool{}
	var paths []string
	var walk func(prefix string, in, out interface{})
	walk = func(prefix string, in, out interface{}) {
		switch iv := in.(type) {
		case map[string]interface{}:
			ov, _ := out.(map[string]interface{})
			for k, v := range iv {
				if empty(v) {
					continue
				}
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				if o, ok := ov[k]; ok {
					walk(p, v, o)
				} else if !seen[p] {
					seen[p] = true
					paths = append(paths, p)
				}
			}
		case []interface{}:
			ov, _ := out.([]interface{})
			for i, v := range iv {
				if i < len(ov) {
					walk(prefix+"[]", v, ov[i])
				}
			}
		}
	}
	walk("", in, out)
	sort.Strings(paths)
	return paths
}

// empty values say nothing the types could have dropped.
func empty(v interface{}) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]interface{}:
		return len(v) == 0
	case []interface{}:
		return len(v) == 0
	}
	return false
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "podhash: "+format+"\n", args...)
	os.Exit(2)
}

type doc struct {
	file, pos, name string
	// source is the manifest's path on the node (static pods' UIDs).
	source string
	hasUID bool
	obj    map[string]interface{}
	data   []byte
}

func (d doc) namespace() string {
	meta, _ := d.obj["metadata"].(map[string]interface{})
	if ns, _ := meta["namespace"].(string); ns != "" {
		return ns
	}
	return "default"
}

type rawContainer struct {
	name string
	init bool
	spec map[string]interface{}
}

// containers lists the pod's containers as written, init containers first.
func (d doc) containers() []rawContainer {
	spec, _ := d.obj["spec"].(map[string]interface{})
	var out []rawContainer
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := spec[field].([]interface{})
		for _, c := range list {
			m, _ := c.(map[string]interface{})
			name, _ := m["name"].(string)
			out = append(out, rawContainer{name: name, init: field == "initContainers", spec: m})
		}
	}
	return out
}

// readInput reads a pods file, or a directory the way the kubelet reads
// its --pod-manifest-path: every file not starting with "." in name order.
// nodePath is where the input lives on the node (static pods' UIDs).
func readInput(path, nodePath string, static bool) ([]doc, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return readPods(path, nodePath)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out []doc
	for _, n := range names {
		docs, err := readPods(filepath.Join(path, n), filepath.Join(nodePath, n))
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no pods", path)
	}
	return out, nil
}

// readPods splits a file into single pod manifests, naming each one's
// position (document, list item) for error messages.
func readPods(path, source string) ([]doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []doc
	for n := 1; ; n++ {
		var obj map[string]interface{}
		if err := dec.Decode(&obj); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %v", path, n, err)
		}
		if obj == nil {
			continue // an empty document
		}
		pos := "document " + strconv.Itoa(n)
		switch kind, _ := obj["kind"].(string); kind {
		case "Pod":
			d, err := podDoc(obj, pos)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			out = append(out, d)
		case "PodList", "List":
			items, _ := obj["items"].([]interface{})
			for i, it := range items {
				item, _ := it.(map[string]interface{})
				ipos := fmt.Sprintf("%s item %d", pos, i+1)
				if k, _ := item["kind"].(string); k != "Pod" && !(k == "" && kind == "PodList") {
					return nil, fmt.Errorf("%s: %s: kind %q is not a Pod", path, ipos, k)
				}
				if item["apiVersion"] == nil {
					item["apiVersion"], item["kind"] = obj["apiVersion"], "Pod"
				}
				d, err := podDoc(item, ipos)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", path, err)
				}
				out = append(out, d)
			}
		default:
			return nil, fmt.Errorf("%s: %s: kind %q is not a Pod, PodList or List", path, pos, kind)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no pods", path)
	}
	for i := range out {
		out[i].file, out[i].source = path, source
	}
	return out, nil
}

func podDoc(obj map[string]interface{}, pos string) (doc, error) {
	if v, _ := obj["apiVersion"].(string); v != "v1" {
		return doc{}, fmt.Errorf("%s: apiVersion %q is not v1", pos, v)
	}
	meta, _ := obj["metadata"].(map[string]interface{})
	name, _ := meta["name"].(string)
	if strings.TrimSpace(name) == "" {
		return doc{}, fmt.Errorf("%s: pod has no metadata.name", pos)
	}
	uid, _ := meta["uid"].(string)
	data, err := json.Marshal(obj)
	return doc{pos: pos + " (pod " + name + ")", name: name, hasUID: uid != "", obj: obj, data: data}, err
}

func readStored(path string) (map[string]uint64, error) {
	out := map[string]uint64{}
	if path == "" {
		return out, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		h, err := strconv.ParseUint(f[len(f)-1], 10, 64)
		if len(f) != 2 || err != nil {
			return nil, fmt.Errorf("%s:%d: not '<namespace>/<pod>/<container> <hash>'", path, i+1)
		}
		out[f[0]] = h
	}
	return out, nil
}
