package rehearsal

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/tools/docker"
)

// MaxNodes bounds NODES: every node runs its own dockerd and kubelet on
// this machine.
const MaxNodes = 20

// Skew is the kubelet versions an API server supports: its own minor and
// the two before it, never a newer one.
const Skew = 2

// CheckNodes refuses a node count outside 1..MaxNodes.
func CheckNodes(n int) error {
	if n < 1 || n > MaxNodes {
		return fmt.Errorf("NODES=%d: a rehearsal runs 1 to %d nodes", n, MaxNodes)
	}
	return nil
}

// CheckSkew refuses a kubelet the control plane does not support.
func CheckSkew(what string, kubelet, controlPlane *matrix.Release) error {
	kMaj, _ := kubelet.MajorMinor()
	cMaj, _ := controlPlane.MajorMinor()
	k, c := kubelet.Version().Minor, controlPlane.Version().Minor
	if kMaj != cMaj || k > c || k < c-Skew {
		return fmt.Errorf("%s=%s: the rehearsal's control plane is %s, which supports kubelets %s.%d to %s.%d (not newer than the API server, at most %d minors older)",
			what, kubelet.Release, controlPlane.Release, cMaj, c-Skew, cMaj, c, Skew)
	}
	return nil
}

// ControlPlaneFor picks the newest control plane (a release whose
// versions.yaml entry names a series.controlPlane) that supports every
// kubelet named (FROM, and TO when given), or refuses, naming each control
// plane and the kubelets it supports.
func ControlPlaneFor(m *matrix.Matrix, kubelets map[string]*matrix.Release) (*matrix.Release, error) {
	var cps []*matrix.Release
	for i := range m.Releases {
		if m.Releases[i].Series.ControlPlane != "" {
			cps = append(cps, &m.Releases[i])
		}
	}
	sort.Slice(cps, func(i, j int) bool { return cps[i].Version().Minor > cps[j].Version().Minor })
	var names, offers []string
	for what, k := range kubelets {
		names = append(names, what+"="+k.Release)
	}
	sort.Strings(names)
	for _, cp := range cps {
		ok := true
		for what, k := range kubelets {
			ok = ok && CheckSkew(what, k, cp) == nil
		}
		if ok {
			return cp, nil
		}
		maj, _ := cp.MajorMinor()
		offers = append(offers, fmt.Sprintf("%s (kubelets %s.%d to %s.%d)", cp.Release, maj, cp.Version().Minor-Skew, maj, cp.Version().Minor))
	}
	return nil, fmt.Errorf("%s: no rehearsal control plane supports %s (a kubelet never newer than the API server, at most %d minors older); the control planes: %s",
		strings.Join(names, " "), map[bool]string{true: "it", false: "both"}[len(kubelets) == 1], Skew, strings.Join(offers, ", "))
}

// removedAPIs are the group/versions API servers stopped serving for a
// kind, from the minor that removed them, with the one to use instead
// (kubernetes' deprecated API migration guide).
var removedAPIs = []struct {
	groupVersion string
	kinds        []string
	minor        int
	use          string
}{
	{"extensions/v1beta1", []string{"DaemonSet", "Deployment", "ReplicaSet"}, 16, "apps/v1"},
	{"extensions/v1beta1", []string{"NetworkPolicy"}, 16, "networking.k8s.io/v1"},
	{"extensions/v1beta1", []string{"PodSecurityPolicy"}, 16, "policy/v1beta1"},
	{"apps/v1beta1", []string{"Deployment", "StatefulSet", "ControllerRevision"}, 16, "apps/v1"},
	{"apps/v1beta2", []string{"DaemonSet", "Deployment", "ReplicaSet", "StatefulSet", "ControllerRevision"}, 16, "apps/v1"},
	{"extensions/v1beta1", []string{"Ingress"}, 22, "networking.k8s.io/v1"},
	{"networking.k8s.io/v1beta1", []string{"Ingress", "IngressClass"}, 22, "networking.k8s.io/v1"},
	{"rbac.authorization.k8s.io/v1beta1", []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}, 22, "rbac.authorization.k8s.io/v1"},
	{"admissionregistration.k8s.io/v1beta1", []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}, 22, "admissionregistration.k8s.io/v1"},
	{"apiextensions.k8s.io/v1beta1", []string{"CustomResourceDefinition"}, 22, "apiextensions.k8s.io/v1"},
	{"apiregistration.k8s.io/v1beta1", []string{"APIService"}, 22, "apiregistration.k8s.io/v1"},
	{"certificates.k8s.io/v1beta1", []string{"CertificateSigningRequest"}, 22, "certificates.k8s.io/v1"},
	{"coordination.k8s.io/v1beta1", []string{"Lease"}, 22, "coordination.k8s.io/v1"},
	{"scheduling.k8s.io/v1beta1", []string{"PriorityClass"}, 22, "scheduling.k8s.io/v1"},
	{"storage.k8s.io/v1beta1", []string{"CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"}, 22, "storage.k8s.io/v1"},
	{"batch/v1beta1", []string{"CronJob"}, 25, "batch/v1"},
	{"discovery.k8s.io/v1beta1", []string{"EndpointSlice"}, 25, "discovery.k8s.io/v1"},
	{"events.k8s.io/v1beta1", []string{"Event"}, 25, "events.k8s.io/v1"},
	{"autoscaling/v2beta1", []string{"HorizontalPodAutoscaler"}, 25, "autoscaling/v2"},
	{"policy/v1beta1", []string{"PodDisruptionBudget"}, 25, "policy/v1"},
	{"policy/v1beta1", []string{"PodSecurityPolicy"}, 25, "Pod Security Admission (PodSecurityPolicy was removed)"},
	{"node.k8s.io/v1beta1", []string{"RuntimeClass"}, 25, "node.k8s.io/v1"},
}

// notServed returns the group/version to use when cp's API server does
// not serve kind at apiVersion, else "".
func notServed(apiVersion, kind string, cp *matrix.Release) string {
	if cp == nil {
		return ""
	}
	minor := cp.Version().Minor
	for _, r := range removedAPIs {
		if r.groupVersion == apiVersion && minor >= r.minor && slices.Contains(r.kinds, kind) {
			return r.use
		}
	}
	return ""
}

// CheckManifests reads every .yaml, .yml and .json file under dir (as
// kubectl apply --recursive does) and refuses, naming the file and the
// document, one that is not a Kubernetes object (apiVersion and kind), and
// any container image that would need a registry: a :latest or untagged
// image, or imagePullPolicy Always (the nodes reach no registry).
func CheckManifests(dir string, cp *matrix.Release) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("MANIFESTS=%s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("MANIFESTS=%s: not a directory", dir)
	}
	var problems []string
	objects := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, doc := range splitYAML(data) {
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				problems = append(problems, fmt.Sprintf("%s (document %d): not YAML or JSON: %v", path, i+1, err))
				continue
			}
			if obj == nil {
				continue // an empty document
			}
			if s, _ := obj["apiVersion"].(string); s == "" {
				problems = append(problems, fmt.Sprintf("%s (document %d): not a Kubernetes object: no apiVersion", path, i+1))
				continue
			}
			if s, _ := obj["kind"].(string); s == "" {
				problems = append(problems, fmt.Sprintf("%s (document %d): not a Kubernetes object: no kind", path, i+1))
				continue
			}
			objects++
			apiVersion, kind := obj["apiVersion"].(string), obj["kind"].(string)
			if use := notServed(apiVersion, kind, cp); use != "" {
				problems = append(problems, fmt.Sprintf("%s (document %d): %s %s is not served by the %s API server (the rehearsal's control plane): use %s", path, i+1, kind, apiVersion, cp.Release, use))
			}
			for _, c := range containersOf(obj) {
				if why := needsRegistry(c); why != "" {
					problems = append(problems, fmt.Sprintf("%s (document %d, container %v): %s: the nodes reach no registry (load the image with IMAGES and pin its tag)", path, i+1, c["name"], why))
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("MANIFESTS=%s: %w", dir, err)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("MANIFESTS=%s:\n  %s", dir, strings.Join(problems, "\n  "))
	}
	if objects == 0 {
		return fmt.Errorf("MANIFESTS=%s: no Kubernetes object in any .yaml, .yml or .json file", dir)
	}
	return nil
}

// splitYAML splits a stream at "---" document separators.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if t := bytes.TrimRight(line, " \t\r\n"); bytes.Equal(t, []byte("---")) {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			continue
		}
		cur.Write(line)
	}
	return append(docs, cur.Bytes())
}

// containersOf finds the containers and init containers of a pod, or of
// a workload's pod template (spec.template.spec, and a CronJob's
// spec.jobTemplate.spec.template.spec).
func containersOf(obj map[string]any) []map[string]any {
	var out []map[string]any
	var walk func(spec map[string]any)
	walk = func(spec map[string]any) {
		for _, key := range []string{"initContainers", "containers"} {
			list, _ := spec[key].([]any)
			for _, c := range list {
				if m, ok := c.(map[string]any); ok {
					out = append(out, m)
				}
			}
		}
	}
	spec, _ := obj["spec"].(map[string]any)
	for spec != nil {
		walk(spec)
		if jt, ok := spec["jobTemplate"].(map[string]any); ok {
			spec, _ = jt["spec"].(map[string]any)
			continue
		}
		t, _ := spec["template"].(map[string]any)
		spec, _ = t["spec"].(map[string]any)
	}
	return out
}

// needsRegistry says why a container's image would be pulled, or "".
func needsRegistry(c map[string]any) string {
	image, _ := c["image"].(string)
	if p, _ := c["imagePullPolicy"].(string); p == "Always" {
		return fmt.Sprintf("image %q with imagePullPolicy Always", image)
	}
	name := image
	if i := strings.LastIndex(name, "@"); i >= 0 {
		return "" // pinned by digest
	}
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag = name[i+1:]
	}
	if tag == "" || tag == "latest" {
		return fmt.Sprintf("image %q is :latest (pulled every time a pod starts)", image)
	}
	return ""
}

// CheckImageFiles refuses an IMAGES entry that names a path (it holds a
// "/" or ends in .tar) that is not a regular file; names of images are
// looked up on the engines later.
func CheckImageFiles(images []string) error {
	for _, img := range images {
		if !isImageFile(img) {
			continue
		}
		st, err := os.Stat(img)
		switch {
		case err != nil:
			return fmt.Errorf("IMAGES: %s: %w", img, err)
		case !st.Mode().IsRegular():
			return fmt.Errorf("IMAGES: %s is not a file (a docker save tarball)", img)
		}
	}
	return nil
}

// isImageFile says whether an IMAGES entry names a tarball, not an image.
func isImageFile(img string) bool {
	return strings.HasSuffix(img, ".tar") || strings.HasPrefix(img, "/") || strings.HasPrefix(img, ".")
}

// CheckImagesFound refuses an IMAGES name that no engine holds (the nodes
// reach no registry, so it could never be loaded). found looks a name up.
func CheckImagesFound(images []string, found func(ref string) bool) error {
	var missing []string
	for _, img := range images {
		if !isImageFile(img) && !found(img) {
			missing = append(missing, img)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("IMAGES: %s: on neither the rehearsal's engine nor the machine's (load it into one, or give a docker save tarball)", strings.Join(missing, ", "))
	}
	return nil
}

// ImageOnEngines looks an image name up on the rehearsal's engine (when it
// runs) and the machine's, read only, as LoadImages will.
func (l Layout) ImageOnEngines(ctx context.Context) func(string) bool {
	return func(ref string) bool {
		for _, e := range []docker.Client{l.engine(), docker.Machine()} {
			if _, err := e.Run(ctx, "image", "inspect", "--format", "{{.Id}}", ref); err == nil {
				return true
			}
		}
		return false
	}
}
