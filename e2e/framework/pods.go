package framework

// Pod is a static pod as the suites write it, usually with a pinned
// metadata.uid: without one (UID ""), the static pod UID is a hash over the
// whole pod that changes between releases, and the pod is replaced whole.
//
// The optional fields are written only when set, so the manifests of the
// pods that do not use them stay as they were.
type Pod struct {
	Name, UID      string
	InitContainers []map[string]any
	Containers     []map[string]any
	Volumes        []map[string]any
	// RestartPolicy defaults to Always.
	RestartPolicy   string
	HostNetwork     bool
	SecurityContext map[string]any
}

// Manifest renders the pod as the kubelet reads it.
func (p Pod) Manifest() map[string]any {
	spec := map[string]any{
		"containers":                    p.Containers,
		"restartPolicy":                 "Always",
		"terminationGracePeriodSeconds": 5,
	}
	if len(p.InitContainers) > 0 {
		spec["initContainers"] = p.InitContainers
	}
	if len(p.Volumes) > 0 {
		spec["volumes"] = p.Volumes
	}
	if p.RestartPolicy != "" {
		spec["restartPolicy"] = p.RestartPolicy
	}
	if p.HostNetwork {
		spec["hostNetwork"] = true
	}
	if p.SecurityContext != nil {
		spec["securityContext"] = p.SecurityContext
	}
	meta := map[string]any{"name": p.Name, "namespace": "default"}
	if p.UID != "" {
		meta["uid"] = p.UID
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   meta,
		"spec":       spec,
	}
}

// WorkloadImage is built from tools/images/workload by tools/engine-up.sh.
const WorkloadImage = "e2e.local/workload:1"

// Workload is a workload container that writes data into its writable
// layer at start (so a recreated container is told apart from a kept one).
func Workload(name, dataFile string, extra map[string]any) map[string]any {
	c := map[string]any{
		"name":            name,
		"image":           WorkloadImage,
		"imagePullPolicy": "Never",
		"env": []map[string]any{
			{"name": "WRITE_FILE", "value": dataFile},
		},
	}
	for k, v := range extra {
		if k == "env" {
			c["env"] = append(c["env"].([]map[string]any), v.([]map[string]any)...)
			continue
		}
		c[k] = v
	}
	return c
}
