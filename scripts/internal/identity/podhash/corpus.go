package podhash

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
)

// Corpus writes at least n containers (init containers count), spread over
// pods of up to four, as a List of
// static pods valid for 1.7 through 1.9 (1.8/1.9-only fields included on
// some: securityContext.allowPrivilegeEscalation, volumeMounts[].
// mountPropagation). imageSuffix is appended to every image, so a second
// corpus differs from the first only in images. The same seed gives the
// same file. Without alphaGates, fields that need a feature gate on some
// release (mountPropagation, alpha in 1.8/1.9; volumeDevices, alpha in 1.9)
// are left out. Some containers are privileged.
func Corpus(path string, n int, seed int64, imageSuffix string, alphaGates bool) (int, error) {
	rnd := rand.New(rand.NewSource(seed))
	var items []map[string]any
	made := 0
	for made < n {
		pod := corpusPod(rnd, len(items), 1+rnd.Intn(4), imageSuffix, alphaGates)
		spec := pod["spec"].(map[string]any)
		made += len(spec["containers"].([]map[string]any))
		if ic, ok := spec["initContainers"].([]map[string]any); ok {
			made += len(ic)
		}
		items = append(items, pod)
	}
	data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", " ")
	if err != nil {
		return 0, err
	}
	return made, os.WriteFile(path, data, 0o644)
}

func corpusPod(rnd *rand.Rand, i, containers int, imageSuffix string, alpha bool) map[string]any {
	var cs []map[string]any
	for j := 0; j < containers; j++ {
		cs = append(cs, corpusContainer(rnd, j, imageSuffix, false, alpha))
	}
	spec := map[string]any{
		"containers": cs,
		"volumes": []map[string]any{
			{"name": "scratch", "emptyDir": map[string]any{}},
			{"name": "host", "hostPath": map[string]any{"path": "/var/lib/corpus"}},
		},
	}
	if rnd.Intn(3) == 0 {
		spec["initContainers"] = []map[string]any{corpusContainer(rnd, containers, imageSuffix, true, alpha)}
	}
	meta := map[string]any{"name": fmt.Sprintf("pod-%04d", i), "namespace": []string{"default", "kube-system", "apps"}[rnd.Intn(3)]}
	if rnd.Intn(2) == 0 {
		meta["uid"] = fmt.Sprintf("corpus-uid-%04d", i)
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
}

func corpusContainer(rnd *rand.Rand, j int, imageSuffix string, init, alpha bool) map[string]any {
	c := map[string]any{
		"name":  fmt.Sprintf("c%d", j),
		"image": fmt.Sprintf("registry.example/app-%d:v%d%s", rnd.Intn(50), rnd.Intn(9), imageSuffix),
	}
	maybe := func() bool { return rnd.Intn(2) == 0 }
	if maybe() {
		c["imagePullPolicy"] = []string{"Always", "IfNotPresent", "Never"}[rnd.Intn(3)]
	}
	if maybe() {
		c["command"] = []string{"/bin/app", fmt.Sprintf("--id=%d", rnd.Intn(1000))}
	}
	if maybe() {
		c["args"] = []string{}
	}
	if maybe() {
		c["workingDir"] = "/srv"
	}
	port := 1000 + j*10 + rnd.Intn(10)
	if maybe() {
		p := map[string]any{"containerPort": port, "protocol": []string{"TCP", "UDP"}[rnd.Intn(2)]}
		if maybe() {
			p["name"] = fmt.Sprintf("p%d", j)
		}
		c["ports"] = []map[string]any{p}
	}
	if maybe() {
		env := []map[string]any{{"name": "PLAIN", "value": fmt.Sprint(rnd.Intn(100))}}
		if maybe() {
			env = append(env, map[string]any{"name": "MEM", "valueFrom": map[string]any{"resourceFieldRef": map[string]any{
				"resource": "limits.memory", "divisor": []string{"1Mi", "1", "1Ki"}[rnd.Intn(3)]}}})
		}
		if maybe() {
			env = append(env, map[string]any{"name": "NODE", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "spec.nodeName"}}})
		}
		c["env"] = env
	}
	if maybe() {
		c["envFrom"] = []map[string]any{{"prefix": "CFG_", "configMapRef": map[string]any{"name": "cfg"}}}
	}
	if maybe() {
		req := map[string]any{"cpu": fmt.Sprintf("%dm", 10+rnd.Intn(90)), "memory": fmt.Sprintf("%dMi", 8+rnd.Intn(56))}
		res := map[string]any{"requests": req}
		if maybe() {
			res["limits"] = map[string]any{"cpu": "1", "memory": "128Mi"}
		}
		c["resources"] = res
	}
	probe := func() map[string]any {
		var h map[string]any
		switch rnd.Intn(3) {
		case 0:
			h = map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": port}}
		case 1:
			h = map[string]any{"tcpSocket": map[string]any{"port": port}}
		default:
			h = map[string]any{"exec": map[string]any{"command": []string{"cat", "/tmp/ok"}}}
		}
		h["periodSeconds"] = 1 + rnd.Intn(20)
		if maybe() {
			h["initialDelaySeconds"] = rnd.Intn(30)
		}
		return h
	}
	// Probes and hooks are not allowed on init containers.
	if maybe() && !init {
		c["livenessProbe"] = probe()
	}
	if maybe() && !init {
		c["readinessProbe"] = probe()
	}
	if maybe() && !init {
		c["lifecycle"] = map[string]any{"preStop": map[string]any{"exec": map[string]any{"command": []string{"sleep", "1"}}}}
	}
	if maybe() {
		m := map[string]any{"name": "scratch", "mountPath": "/scratch"}
		if maybe() {
			m["subPath"] = fmt.Sprintf("c%d", j)
		}
		mounts := []map[string]any{m}
		if maybe() {
			hm := map[string]any{"name": "host", "mountPath": "/host", "readOnly": true}
			if maybe() && alpha {
				hm["mountPropagation"] = "HostToContainer" // 1.8+
			}
			mounts = append(mounts, hm)
		}
		c["volumeMounts"] = mounts
	}
	if maybe() {
		sc := map[string]any{}
		if maybe() {
			sc["runAsUser"] = rnd.Intn(2000)
		}
		if maybe() {
			sc["readOnlyRootFilesystem"] = maybe()
		}
		if maybe() {
			sc["allowPrivilegeEscalation"] = maybe() // 1.8+, as PodSecurityPolicy sets it
		}
		if maybe() {
			sc["capabilities"] = map[string]any{"drop": []string{"NET_RAW"}}
		}
		if rnd.Intn(4) == 0 {
			sc["privileged"] = true // refused by a static pod path without --allow-privileged
		}
		c["securityContext"] = sc
	}
	if rnd.Intn(8) == 0 {
		c["stdin"], c["tty"] = true, maybe()
	}
	if alpha && rnd.Intn(6) == 0 {
		// 1.9+, alpha behind BlockVolume: an API server with the gate stores it.
		c["volumeDevices"] = []map[string]any{{"name": "block", "devicePath": "/dev/xvda"}}
	}
	if maybe() {
		c["terminationMessagePolicy"] = "FallbackToLogsOnError"
	}
	return c
}
