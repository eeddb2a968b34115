package podhash

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kubelet-toolchain/scripts/internal/matrix"
	"kubelet-toolchain/scripts/internal/schemadiff"
	"kubelet-toolchain/scripts/internal/schemagen"
	"kubelet-toolchain/scripts/internal/source"
)

// legacySchemas is where the legacy-types overlay commits the Container
// graphs (v17/v1/types.go, v18/v1/types.go).
const legacySchemas = "overlay/legacy-types/pkg/kubelet/legacytypes"

// hashPrediction says, per container (Result.Key), whether the schema
// diff between two releases' Container graphs predicts another hash.
type hashPrediction map[string]bool

// predictHashChanges predicts, for every container of the pods file,
// whether vanilla r writes another hash than vanilla old: from old's and
// r's Container graphs (the committed schemas where there are, else
// generated from the release's verified module zip).
func predictHashChanges(ctx context.Context, m *matrix.Matrix, old, r *matrix.Release, pods string) (hashPrediction, error) {
	a, err := containerGraph(ctx, m, old)
	if err != nil {
		return nil, err
	}
	b, err := containerGraph(ctx, m, r)
	if err != nil {
		return nil, err
	}
	changed := schemadiff.Changed(a, b)
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
			out[ns+"/"+it.Metadata.Name+"/"+name], _ = schemadiff.Differs(b, changed, "Container", c)
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
	zip, err := source.Zip(ctx, r, "")
	if err != nil {
		return nil, err
	}
	prefix := source.ModulePath + "@" + r.ModuleVersion()
	src, err := schemagen.Container.FromZip(zip, prefix, "", "")
	if err != nil {
		return nil, err
	}
	return schemadiff.Parse(strings.TrimSuffix(prefix, "/")+" (generated)", src)
}
