package podhash

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/identity/schemadiff"
	"kubelet-toolchain/scripts/internal/identity/schemagen"
	"kubelet-toolchain/scripts/internal/pipeline/gomod"
	"kubelet-toolchain/scripts/internal/pipeline/lock"
	"kubelet-toolchain/scripts/internal/pipeline/source"
)

// legacySchemas is where the legacy-types overlay commits the Container
// graphs (v17/v1/types.go, v18/v1/types.go).
const legacySchemas = "overlay/legacy-types/pkg/kubelet/legacytypes"

// hashPrediction says, per container (Result.Key), whether the schema
// diff between two releases' Container graphs predicts another hash.
type hashPrediction map[string]bool

// jsonHash says whether r's kubelet hashes a container's JSON (from 1.16,
// kubernetes#57741) rather than its go-spew dump.
func jsonHash(r *matrix.Release) bool {
	v := r.Version()
	return v.Major == 1 && v.Minor >= 16
}

// graph is r's Container graph, generated once per run (a modules-era
// release's asks the go command for its k8s.io/api zip).
func (c *Crosscheck) graph(ctx context.Context, r *matrix.Release) (schemadiff.Graph, error) {
	if g, ok := c.graphs[r.Release]; ok {
		return g, nil
	}
	g, err := containerGraph(ctx, c.Matrix, r)
	if err != nil {
		return nil, err
	}
	if c.graphs == nil {
		c.graphs = map[string]schemadiff.Graph{}
	}
	c.graphs[r.Release] = g
	return g, nil
}

// hashesChange says whether vanilla old and r hash some container
// differently: their Container graphs print differently (1.12 and 1.13
// print alike, and so do 1.16 .. 1.18) or the hash function changed.
func (c *Crosscheck) hashesChange(ctx context.Context, old, r *matrix.Release) (bool, error) {
	a, b, err := c.graphPair(ctx, old, r)
	return jsonHash(old) != jsonHash(r) || len(schemadiff.Changed(a, b)) > 0, err
}

// graphPair is old's and r's Container graphs.
func (c *Crosscheck) graphPair(ctx context.Context, old, r *matrix.Release) (a, b schemadiff.Graph, err error) {
	if a, err = c.graph(ctx, old); err != nil {
		return nil, nil, err
	}
	b, err = c.graph(ctx, r)
	return a, b, err
}

// predictHashChanges predicts, for every container of the pods file,
// whether vanilla r writes another hash than vanilla old: from old's and
// r's Container graphs (the committed schemas where there are, else
// generated from the release's verified module zip), as go-spew dumps
// them or, when both hash JSON, as encoding/json writes them.
func (c *Crosscheck) predictHashChanges(ctx context.Context, old, r *matrix.Release, pods string) (hashPrediction, error) {
	a, b, err := c.graphPair(ctx, old, r)
	if err != nil {
		return nil, err
	}
	var differs func(container map[string]any) bool
	switch {
	case jsonHash(old) != jsonHash(r):
		// Across 1.15 -> 1.16 the hash function itself changed: the JSON
		// dump and the go-spew dump agree on no container.
		differs = func(map[string]any) bool { return true }
	case jsonHash(old) && jsonHash(r):
		differs = func(container map[string]any) bool {
			d, _ := schemadiff.JSONDiffers(a, b, "Container", container)
			return d
		}
	default:
		changed := schemadiff.Changed(a, b)
		differs = func(container map[string]any) bool {
			d, _ := schemadiff.Differs(b, changed, "Container", container)
			return d
		}
	}
	data, err := os.ReadFile(pods)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
			Spec     struct {
				InitContainers []map[string]any `json:"initContainers"`
				Containers     []map[string]any `json:"containers"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", pods, err)
	}
	out := hashPrediction{}
	for _, it := range list.Items {
		ns := it.Metadata.Namespace
		if ns == "" {
			ns = "default"
		}
		for _, c := range append(it.Spec.InitContainers, it.Spec.Containers...) {
			name, _ := c["name"].(string)
			out[ns+"/"+it.Metadata.Name+"/"+name] = differs(c)
		}
	}
	return out, nil
}

// containerGraph is r's core/v1 Container graph.
func containerGraph(ctx context.Context, m *matrix.Matrix, r *matrix.Release) (schemadiff.Graph, error) {
	major, minor := r.MajorMinor()
	committed := filepath.Join(m.Root, legacySchemas, "v"+major+minor, "v1", "types.go")
	if src, err := os.ReadFile(committed); err == nil {
		return schemadiff.Parse(committed, src)
	}
	zip, prefix, err := apiZip(ctx, m, r)
	if err != nil {
		return nil, err
	}
	src, err := schemagen.Container.FromZip(zip, prefix, "", "")
	if err != nil {
		return nil, err
	}
	return schemadiff.Parse(strings.TrimSuffix(prefix, "/")+" (generated)", src)
}

// apiZip is the verified module zip that holds r's core/v1 types, and its
// path prefix: k8s.io/kubernetes's own in the godeps era (staging/ inside
// it); in the modules era that zip has no staging/, and the published
// k8s.io/api at the lock's staging version is what the build vendors.
func apiZip(ctx context.Context, m *matrix.Matrix, r *matrix.Release) (zip, prefix string, err error) {
	if r.Era != matrix.EraModules {
		zip, err := source.Zip(ctx, r, "")
		return zip, source.ModulePath + "@" + r.ModuleVersion(), err
	}
	l, err := lock.Load(filepath.Join(m.Root, r.Lock()))
	if err != nil {
		return "", "", err
	}
	id := "k8s.io/api@" + l.GoMod.StagingVersion
	mods, err := gomod.Download(ctx, r.Go, id)
	if err != nil {
		return "", "", fmt.Errorf("release %s: fetching %s: %w", r.Release, id, err)
	}
	if mods[0].Error != "" {
		return "", "", fmt.Errorf("release %s: fetching %s: %s", r.Release, id, mods[0].Error)
	}
	return mods[0].Zip, id, nil
}
