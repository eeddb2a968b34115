package podhash

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// ManifestDirs are the directories of a Kubernetes source tree that hold
// real workload manifests: the cluster add-ons, the examples and the e2e
// suites' own manifests.
var ManifestDirs = []string{"cluster/addons/", "examples/", "test/e2e/testing-manifests/"}

var (
	// docSeparator splits multi-document YAML.
	docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)
	// Template markup of the tree's templated manifests (salt/jinja add-ons,
	// the e2e suites' .in files): statements are dropped, every expression
	// becomes 1 (a valid name, image, port and quantity alike).
	templateStatement  = regexp.MustCompile(`(?m)^.*\{%.*%\}.*$`)
	templateExpression = regexp.MustCompile(`\{\{[^}]*\}\}`)
	// quantity is the form a resource quantity takes (apimachinery's
	// resource.Quantity).
	quantity = regexp.MustCompile(`^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`)
)

// ManifestCorpus turns every workload manifest under ManifestDirs of a
// module zip (prefix is the zip's "<module>@<version>/") into a Pod as
// kubectl shows it: a Pod as written, or the pod template of a
// ReplicationController, ReplicaSet, Deployment, DaemonSet, StatefulSet,
// Job or CronJob, with a name, namespace and uid. Templated manifests are
// filled in (templateExpression); files that still are not YAML or JSON
// are skipped and listed. It writes the pods as a List to out.
func ManifestCorpus(zipPath, prefix, out string) (pods int, skipped []string, err error) {
	z, err := zip.OpenReader(zipPath)
	if err != nil {
		return 0, nil, err
	}
	defer z.Close()
	var items []map[string]any
	names := map[string]int{}
	for _, f := range z.File {
		rel, ok := strings.CutPrefix(f.Name, prefix)
		if !ok || !underAny(rel, ManifestDirs) {
			continue
		}
		switch ext := path.Ext(strings.TrimSuffix(rel, ".in")); ext {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return 0, nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return 0, nil, err
		}
		found, bad := podsIn(data)
		if bad {
			skipped = append(skipped, rel)
		}
		for _, p := range found {
			meta := p["metadata"].(map[string]any)
			base := meta["name"].(string)
			names[base]++
			meta["name"] = fmt.Sprintf("%s-%d", base, names[base])
			meta["uid"] = fmt.Sprintf("corpus-%s-%d", base, names[base])
			meta["annotations"] = map[string]any{"toolchain/source": rel}
			items = append(items, p)
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		return items[i]["metadata"].(map[string]any)["name"].(string) < items[j]["metadata"].(map[string]any)["name"].(string)
	})
	data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", " ")
	if err != nil {
		return 0, nil, err
	}
	return len(items), skipped, os.WriteFile(out, data, 0o644)
}

func underAny(rel string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(rel, d) {
			return true
		}
	}
	return false
}

// podsIn returns the pods a manifest file describes; bad is true when a
// document is neither YAML nor JSON.
func podsIn(data []byte) (pods []map[string]any, bad bool) {
	data = templateStatement.ReplaceAll(data, nil)
	data = templateExpression.ReplaceAll(data, []byte("1"))
	var docs [][]byte
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		docs = [][]byte{data}
	} else {
		for _, d := range docSeparator.Split(string(data), -1) {
			docs = append(docs, []byte(d))
		}
	}
	for _, d := range docs {
		if len(bytes.TrimSpace(d)) == 0 {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal(d, &obj); err != nil {
			bad = true
			continue
		}
		pods = append(pods, podsOf(obj)...)
	}
	return pods, bad
}

// podsOf finds the pod (or pod template) an object carries.
func podsOf(obj map[string]any) []map[string]any {
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	spec, _ := obj["spec"].(map[string]any)
	var podSpec map[string]any
	switch kind {
	case "List":
		var out []map[string]any
		items, _ := obj["items"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				out = append(out, podsOf(m)...)
			}
		}
		return out
	case "Pod":
		podSpec = spec
	case "ReplicationController", "ReplicaSet", "Deployment", "DaemonSet", "StatefulSet", "Job":
		podSpec = dig(spec, "template", "spec")
	case "CronJob":
		podSpec = dig(spec, "jobTemplate", "spec", "template", "spec")
	default:
		return nil
	}
	name, _ := meta["name"].(string)
	if podSpec == nil || name == "" {
		return nil
	}
	if _, ok := podSpec["containers"].([]any); !ok {
		return nil
	}
	if kind == "StatefulSet" {
		// The StatefulSet controller gives each pod a volume per claim
		// template, replacing a template volume of the same name.
		claims, _ := spec["volumeClaimTemplates"].([]any)
		byName := map[string]bool{}
		var vols []any
		for _, c := range claims {
			cm, _ := c.(map[string]any)
			cname, _ := dig(cm, "metadata")["name"].(string)
			byName[cname] = true
			vols = append(vols, map[string]any{"name": cname,
				"persistentVolumeClaim": map[string]any{"claimName": cname + "-" + name + "-0"}})
		}
		old, _ := podSpec["volumes"].([]any)
		for _, v := range old {
			if vm, _ := v.(map[string]any); !byName[fmt.Sprint(vm["name"])] {
				vols = append(vols, v)
			}
		}
		if len(vols) > 0 {
			podSpec["volumes"] = vols
		}
	}
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := podSpec[field].([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				fillStrings(m)
				fillQuantities(m)
			}
		}
	}
	ns, _ := meta["namespace"].(string)
	if ns == "" {
		ns = "default"
	}
	return []map[string]any{{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": strings.ToLower(name), "namespace": ns},
		"spec":     podSpec,
	}}
}

func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// fillStrings turns the numbers a filled-in template left in a container's
// string fields back into strings.
func fillStrings(c map[string]any) {
	str := func(v any) any {
		if f, ok := v.(float64); ok {
			return fmt.Sprint(f)
		}
		return v
	}
	for _, k := range []string{"name", "image", "workingDir"} {
		if v, ok := c[k]; ok {
			c[k] = str(v)
		}
	}
	for _, k := range []string{"command", "args"} {
		list, _ := c[k].([]any)
		for i := range list {
			list[i] = str(list[i])
		}
	}
	env, _ := c["env"].([]any)
	for _, e := range env {
		if m, ok := e.(map[string]any); ok {
			if v, ok := m["value"]; ok {
				m["value"] = str(v)
			}
		}
	}
}

// fillQuantities makes 1 of a container's resource quantities that a
// template left as a placeholder's name (1.23's coredns.yaml.in has
// memory: 'dns_memory_limit', the salt pillar's key, where older add-ons
// had a template expression).
func fillQuantities(c map[string]any) {
	res, _ := c["resources"].(map[string]any)
	for _, k := range []string{"limits", "requests"} {
		list, _ := res[k].(map[string]any)
		for name, v := range list {
			if s, ok := v.(string); ok && !quantity.MatchString(s) {
				list[name] = "1"
			}
		}
	}
}
