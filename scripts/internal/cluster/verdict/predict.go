package verdict

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/identity/podhash"
)

// Prediction is the preflight's verdict per pod (namespace/name): Kept,
// Recreated or Replaced, or the preflight's own words when the kubelet
// would refuse the pod.
type Prediction map[string]string

// Predictor runs the toolchain's preflight against one node before its
// first switch, in node mode: the hashes its engine's containers really
// carry, judged by TO's helpers.
type Predictor struct {
	Matrix   *matrix.Matrix
	From, To *matrix.Release
	Variant  matrix.Variant
	Log      io.Writer
	// Dir receives the pods files the preflight read, for the record.
	Dir string
	// Hung collects, over Predict's calls, the containers whose inspect
	// did not answer.
	Hung []podhash.HungContainer
	// Orphans collects the containers whose sandbox was gone.
	Orphans []podhash.OrphanContainer
}

// Predict returns the verdicts for the pods the API places on node (its
// engine at endpoint) and for its static pods (manifests, a host copy of
// the node's --pod-manifest-path, which is manifestPath on the node).
func (p *Predictor) Predict(ctx context.Context, node, endpoint string, podList []byte, manifests, manifestPath string) (Prediction, error) {
	apiFile := filepath.Join(p.Dir, node+"-pods.json")
	n, err := nodePods(podList, node, apiFile)
	if err != nil {
		return nil, err
	}
	out := Prediction{}
	// suffix turns the preflight's pod names into the API's: a static
	// pod's mirror is named <manifest name>-<node>.
	run := func(pods string, o podhash.Options, suffix string) error {
		r := &podhash.PreflightRun{
			Matrix: p.Matrix, From: p.From, FromVariant: matrix.Vanilla, To: p.To,
			Pods: pods, Options: o, Endpoint: endpoint, Log: p.Log,
		}
		rep, err := r.Run(ctx)
		if err != nil {
			return fmt.Errorf("preflight of node %s (%s): %w", node, pods, err)
		}
		for _, h := range rep.Hung { // each run reads the node again
			if !slices.ContainsFunc(p.Hung, func(o podhash.HungContainer) bool { return o.ID == h.ID }) {
				p.Hung = append(p.Hung, h)
			}
		}
		for _, o := range rep.Orphans {
			if !slices.ContainsFunc(p.Orphans, func(x podhash.OrphanContainer) bool { return x.ID == o.ID }) {
				p.Orphans = append(p.Orphans, o)
			}
		}
		for _, row := range rep.Rows {
			verdict, outcome := row.PatchedVerdict, row.PatchedOutcome
			if p.Variant == matrix.Vanilla {
				verdict, outcome = row.VanillaVerdict, row.VanillaOutcome
			}
			i := strings.LastIndex(row.Container, "/")
			if i < 0 {
				continue
			}
			pod := row.Container[:i] + suffix
			if v := podVerdict(verdict, outcome); v != "" {
				out[pod] = worsePrediction(out[pod], v)
			}
		}
		return nil
	}
	if n > 0 {
		if err := run(apiFile, podhash.Options{Source: podhash.SourceAPI}, ""); err != nil {
			return nil, err
		}
	}
	if entries, _ := os.ReadDir(manifests); len(entries) > 0 {
		allow := true
		if err := run(manifests, podhash.Options{Source: podhash.SourceStatic, NodeName: node, ManifestPath: manifestPath, AllowPrivileged: &allow}, "-"+node); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// podVerdict maps a container's typed preflight outcome to the pod outcome
// it predicts ("" for one that predicts nothing: init containers,
// containers not running); a refusal keeps the preflight's words.
func podVerdict(verdict, outcome string) string {
	switch outcome {
	case podhash.OutcomeReplaced:
		return Replaced
	case podhash.OutcomeRecreated:
		return Recreated
	case podhash.OutcomeKept:
		return Kept
	case podhash.OutcomeRejected:
		return verdict
	}
	return ""
}

func worsePrediction(a, b string) string {
	if a == "" {
		return b
	}
	ra, oka := outcomeRank[a]
	rb, okb := outcomeRank[b]
	switch {
	case !oka:
		return a // a refusal stays the verdict
	case !okb:
		return b
	case rb > ra:
		return b
	}
	return a
}

// nodePods writes the API's pods that run on node, mirror pods left out
// (the static manifests are judged as the kubelet reads them), as a List;
// it returns how many.
func nodePods(podList []byte, node, path string) (int, error) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(podList, &list); err != nil {
		return 0, fmt.Errorf("reading the pod list: %w", err)
	}
	var keep []json.RawMessage
	for _, raw := range list.Items {
		var p apiPod
		if err := json.Unmarshal(raw, &p); err != nil {
			return 0, err
		}
		if _, mirror := p.Metadata.Annotations["kubernetes.io/config.mirror"]; mirror || p.Spec.NodeName != node {
			continue
		}
		keep = append(keep, raw)
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": keep})
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	return len(keep), os.WriteFile(path, b, 0o644)
}
