package podhash

import (
	"context"
	"fmt"
	"io"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
)

// BuildFor builds (or reuses) the helper of a release+variant of m, with
// the build's progress to log.
func BuildFor(ctx context.Context, m *matrix.Matrix, r *matrix.Release, v matrix.Variant, log io.Writer) (*Helper, error) {
	return Build(ctx, build.Options{Matrix: m, Release: r, Variant: v, OutputDir: m.OutputDir(), Log: log})
}

// PreflightRun is one preflight of a pods file: FROM's helper (unless only
// a node is given), then TO's vanilla and patched helpers judging the
// hashes FROM wrote or the node's containers carry.
type PreflightRun struct {
	Matrix *matrix.Matrix
	// From is nil in node mode without FROM.
	From        *matrix.Release
	FromVariant matrix.Variant
	To          *matrix.Release
	Pods        string
	Options     Options
	// Endpoint is a live node's Docker endpoint (node mode, read-only).
	Endpoint string
	// Log receives the builds' progress.
	Log io.Writer
}

// Run builds and runs the helpers and compares their results.
func (p *PreflightRun) Run(ctx context.Context) (*Report, error) {
	if p.To == nil || (p.From == nil && p.Endpoint == "") {
		return nil, fmt.Errorf("give TO=... and FROM=... (or NODE=<docker endpoint>)")
	}
	hash := func(r *matrix.Release, v matrix.Variant, stored map[string]uint64) ([]Result, error) {
		h, err := BuildFor(ctx, p.Matrix, r, v, p.Log)
		if err != nil {
			return nil, err
		}
		h.Options = p.Options
		return h.Hash(ctx, p.Pods, stored)
	}
	in := Inputs{To: p.To.Release, Source: p.Options.Source}
	var stored map[string]uint64
	var err error
	if p.From != nil {
		in.From, in.FromVariant = p.From.Release, string(p.FromVariant)
		if in.FromResults, err = hash(p.From, p.FromVariant, nil); err != nil {
			return nil, err
		}
		stored = map[string]uint64{}
		for _, r := range in.FromResults {
			if r.Rejected == "" {
				stored[r.Key()] = r.Hash
			}
		}
	}
	if p.Endpoint != "" {
		if in.Node, err = ReadNode(ctx, p.Endpoint, p.Options.NodeName); err != nil {
			return nil, err
		}
		// The keys the helpers use come from the file: list them once.
		keys, err := hash(p.To, matrix.Vanilla, nil)
		if err != nil {
			return nil, err
		}
		stored = in.Node.StoredFor(keys)
	}
	if in.Vanilla, err = hash(p.To, matrix.Vanilla, stored); err != nil {
		return nil, err
	}
	if in.Patched, err = hash(p.To, matrix.Patched, stored); err != nil {
		return nil, err
	}
	return Preflight(in)
}
