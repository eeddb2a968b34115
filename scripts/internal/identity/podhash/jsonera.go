package podhash

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// newerFields are containers that each set one Container field a release
// of the JSON-hash era added (1.19 .. 1.23), and one that sets none but
// has probes and a hook: under the JSON hash only a container that sets a
// field the older kubelet lacks gets another hash from the newer one.
var newerFields = []struct{ pod, since, field string }{
	{"seccomp-profile", "1.19", `"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}`},
	{"probe-grace-period", "1.21", `"livenessProbe": {"exec": {"command": ["true"]}, "terminationGracePeriodSeconds": 30}`},
	{"host-process", "1.22", `"securityContext": {"windowsOptions": {"hostProcess": true}}`},
	{"grpc-probe", "1.23", `"readinessProbe": {"grpc": {"port": 9000}}`},
	{"none", "", `"livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5},
		"lifecycle": {"postStart": {"exec": {"command": ["true"]}}}, "securityContext": {"runAsUser": 1000}`},
}

// writeNewerFields writes the newerFields pods (one container "app" each)
// as a List.
func writeNewerFields(path string) error {
	var items []string
	for _, n := range newerFields {
		items = append(items, fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": %q, "namespace": "default"},
  "spec": {"containers": [{"name": "app", "image": "busybox", %s}]}}`, n.pod, n.field))
	}
	data := []byte(`{"apiVersion": "v1", "kind": "List", "items": [` + strings.Join(items, ",\n") + "]}\n")
	if !json.Valid(data) {
		return fmt.Errorf("the newer-fields pods are not valid JSON")
	}
	return os.WriteFile(path, data, 0o644)
}

// jsonEra is the cross-release property of the JSON-hash era (1.16 on:
// no hash patch, hashBaseline unset): over the newest such release's own
// manifests and the newerFields pods, each patched build writes its
// vanilla build's hash, and between each such release and the one before
// it in the matrix the vanilla hashes differ for exactly the containers
// the two Container graphs' JSON predicts (a field one release has and
// the other lacks, set). Each step with a Container field added must show
// it on the newerFields pods.
func (c *Crosscheck) jsonEra(ctx context.Context, dir string) error {
	var rs []*matrix.Release
	for i := range c.Matrix.Releases {
		if r := &c.Matrix.Releases[i]; r.StandIn == "" && jsonHash(r) {
			rs = append(rs, r)
		}
	}
	if len(rs) < 2 {
		return nil
	}
	newest := rs[len(rs)-1]
	manifests, fields := filepath.Join(dir, "manifests-"+newest.Release+".json"), filepath.Join(dir, "newer-fields.json")
	if _, _, err := ReleaseManifests(ctx, newest, manifests); err != nil {
		return err
	}
	if err := writeNewerFields(fields); err != nil {
		return err
	}
	files := []string{manifests, fields}
	// results[file][release/variant]
	results := map[string]map[string][]Result{}
	for _, f := range files {
		results[f] = map[string][]Result{}
		for _, r := range rs {
			for _, v := range matrix.Variants {
				res, err := c.hash(ctx, r, v, f)
				if err != nil {
					return fmt.Errorf("%s %s refused a pod of %s: %w", r.Release, v, filepath.Base(f), err)
				}
				results[f][r.Release+"/"+string(v)] = res
			}
		}
	}
	var bad []string
	for _, f := range files {
		for _, r := range rs {
			vanilla, patched := results[f][r.Release+"/vanilla"], results[f][r.Release+"/patched"]
			for i := range vanilla {
				if vanilla[i].Key() != patched[i].Key() || vanilla[i].Hash != patched[i].Hash {
					bad = append(bad, fmt.Sprintf("%s: %s vanilla %d, patched %d (%s)", filepath.Base(f), vanilla[i].Key(), vanilla[i].Hash, patched[i].Hash, r.Release))
				}
			}
		}
	}
	for i := 1; i < len(rs); i++ {
		old, r := rs[i-1], rs[i]
		counts, differ := map[string]int{}, map[string]bool{}
		for _, f := range files {
			predicted, err := c.predictHashChanges(ctx, old, r, f)
			if err != nil {
				return err
			}
			a, b := results[f][old.Release+"/vanilla"], results[f][r.Release+"/vanilla"]
			for j := range a {
				counts[f]++
				want, known := predicted[a[j].Key()]
				if want {
					differ[filepath.Base(f)+": "+a[j].Key()] = true
				}
				if !known || a[j].Key() != b[j].Key() || (a[j].Hash != b[j].Hash) != want {
					bad = append(bad, fmt.Sprintf("%s: %s: vanilla %s %d, vanilla %s %d (the JSON schema diff predicts a change: %v)",
						filepath.Base(f), a[j].Key(), old.Release, a[j].Hash, r.Release, b[j].Hash, want))
				}
			}
		}
		for _, n := range newerFields {
			if n.since != "" && afterMinor(n.since, old) && !afterMinor(n.since, r) && !differ[filepath.Base(fields)+": default/"+n.pod+"/app"] {
				bad = append(bad, fmt.Sprintf("%s -> %s: %s (a Container field of %s) is not predicted to change the hash", old.Release, r.Release, n.pod, n.since))
			}
		}
		var names []string
		for k := range differ {
			names = append(names, k)
		}
		sort.Strings(names)
		if len(bad) == 0 {
			fmt.Fprintf(c.Out, "ok  %s -> %s (JSON hash): %d containers of %s's own manifests and %d with newer fields; the vanilla hashes differ for exactly the %d the JSON schema diff predicts %v; patched == vanilla\n",
				old.Release, r.Release, counts[manifests], newest.Release, counts[fields], len(names), names)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d containers break the JSON-era hash property (first ones):\n  %s", len(bad), strings.Join(bad[:min(len(bad), 10)], "\n  "))
	}
	return nil
}

// afterMinor says whether the 1.N minor since is newer than r's.
func afterMinor(since string, r *matrix.Release) bool {
	s, _ := strconv.Atoi(strings.TrimPrefix(since, "1."))
	return s > r.Version().Minor
}
