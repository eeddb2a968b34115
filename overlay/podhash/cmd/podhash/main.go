// Command podhash prints, for every container of every pod in a file, the
// container hash this kubelet build writes in the container's hash label.
// Pods are decoded exactly as this release decodes static pod manifests
// (pkg/kubelet/config), and hashed with this build's HashContainer. Added
// to the tree by the toolchain (overlay) for `make hash` and `make
// preflight`; it is not part of kubelet.
//
//	podhash [--node NAME] [--stored FILE] [--feature-gates G=true,...] PODS
//
// PODS holds a Pod, a PodList or List (kubectl get pods -o json|yaml), in
// JSON or YAML, several documents allowed. Output: one JSON object per
// container, init containers first, in file order. Exit 2 on bad input.
//
// This file is the same for every release; release.go (from the release's
// build series) names the few things that differ between releases.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/kubelet/config"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
)

// accepts says whether this build keeps a container whose stored hash is
// stored. Vanilla: only its own hash. A fixes series may replace it.
var accepts = func(c *container, stored uint64) bool { return kubecontainer.HashContainer(c) == stored }

func main() {
	node := flag.String("node", "node", "node name the static pod name and UID are derived with")
	stored := flag.String("stored", "", "file of '<namespace>/<pod>/<container> <hash>' lines: also report whether each hash is accepted")
	gates := flag.String("feature-gates", "", "feature gates to enable, as on the kubelet command line")
	flag.Parse()
	if flag.NArg() != 1 {
		fail("usage: podhash [--node NAME] [--stored FILE] [--feature-gates ...] PODS")
	}
	if *gates != "" {
		if err := setFeatureGates(*gates); err != nil {
			fail("--feature-gates: %v", err)
		}
	}
	want, err := readStored(*stored)
	if err != nil {
		fail("%v", err)
	}
	path := flag.Arg(0)
	docs, err := readPods(path)
	if err != nil {
		fail("%v", err)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for _, d := range docs {
		pod, err := config.DecodeStaticPod(d.data, path, types.NodeName(*node))
		if err != nil {
			fail("%s: %s: %v", path, d.pos, err)
		}
		emit := func(c *container, init bool) {
			r := result{Pod: pod.Namespace + "/" + d.name, Container: c.Name, Init: init,
				Hash: kubecontainer.HashContainer(c), UID: string(pod.UID), UIDDerived: !d.hasUID}
			if h, ok := want[r.Pod+"/"+r.Container]; ok {
				a := accepts(c, h)
				r.Accepted = &a
			}
			enc.Encode(r)
		}
		for i := range pod.Spec.InitContainers {
			emit(&pod.Spec.InitContainers[i], true)
		}
		for i := range pod.Spec.Containers {
			emit(&pod.Spec.Containers[i], false)
		}
	}
}

type result struct {
	Pod        string `json:"pod"`
	Container  string `json:"container"`
	Init       bool   `json:"init"`
	Hash       uint64 `json:"hash"`
	UID        string `json:"uid"`
	UIDDerived bool   `json:"uidDerived"`
	Accepted   *bool  `json:"accepted,omitempty"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "podhash: "+format+"\n", args...)
	os.Exit(2)
}

type doc struct {
	pos, name string
	hasUID    bool
	data      []byte
}

// readPods splits a file into single pod manifests, naming each one's
// position (document, list item) for error messages.
func readPods(path string) ([]doc, error) {
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
	return doc{pos: pos + " (pod " + name + ")", name: name, hasUID: uid != "", data: data}, err
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
