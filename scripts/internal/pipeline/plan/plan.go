// Package plan says which build targets a change touches: each target's
// inputs (build.InputsOf) against the record beside CHECKSUMS. CI builds
// the targets whose inputs differ (and those its own specs run); a
// release's shard builds all of its own, whatever the record says.
package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
)

// Target is one build target with its inputs and how they compare with
// the record.
type Target struct {
	Release *matrix.Release
	Target  *build.Target
	Options build.Options
	Key     string // "1.9.11/patched", as CHECKSUMS.inputs names it
	Inputs  checksums.Inputs
	// Differ names the inputs that differ from the record (every one,
	// "(new)", for a target the record lacks); empty when unchanged.
	Differ []string
}

// Changed reports whether the target's inputs differ from the record.
func (t Target) Changed() bool { return len(t.Differ) > 0 }

// Kubelet reports whether the target is a kubelet variant.
func (t Target) Kubelet() bool { return isVariant(t.Target.Name) }

// Why says, for CI's log, why the target is or is not built.
func (t Target) Why() string {
	if t.Changed() {
		return "inputs differ from " + checksums.InputsFileName + ": " + strings.Join(t.Differ, ", ")
	}
	return "inputs unchanged since CHECKSUMS recorded them"
}

// Targets lists every target of the named releases (every release that
// can be built here when names is empty), in the matrix's order, each
// compared with the record.
func Targets(ctx context.Context, m *matrix.Matrix, names []string) ([]Target, error) {
	rec, err := checksums.LoadInputs(filepath.Join(m.Root, checksums.InputsFileName))
	if err != nil {
		return nil, err
	}
	driver, err := build.DriverDigest(m.Root)
	if err != nil {
		return nil, err
	}
	var out []Target
	for i := range m.Releases {
		r := &m.Releases[i]
		if r.StandIn != "" || len(names) > 0 && !slices.Contains(names, r.Release) {
			continue
		}
		o := build.Options{Matrix: m, Release: r, OutputDir: m.OutputDir()}
		for _, t := range build.Targets(ctx, o) {
			if isVariant(t.Name) {
				o.Variant = matrix.Variant(t.Name)
			}
			in, err := build.InputsOf(o, t, driver)
			if err != nil {
				return nil, err
			}
			key := build.TargetKey(r, t)
			out = append(out, Target{Release: r, Target: t, Options: o, Key: key, Inputs: in, Differ: in.Differ(rec[key])})
		}
	}
	for _, n := range names {
		if _, err := m.Lookup(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func isVariant(name string) bool { return slices.Contains(matrix.Variants, matrix.Variant(name)) }

// Releases lists, in order and once each, the releases of the targets
// that pass keep.
func Releases(ts []Target, keep func(Target) bool) []string {
	var out []string
	for _, t := range ts {
		if keep(t) && (len(out) == 0 || out[len(out)-1] != t.Release.Release) {
			out = append(out, t.Release.Release)
		}
	}
	return out
}

// Summary is one line per target: built or not, and why.
func Summary(ts []Target, built func(Target) bool) string {
	var b strings.Builder
	for _, t := range ts {
		verb := "skipped"
		if built(t) {
			verb = "built  "
		}
		fmt.Fprintf(&b, "  %s %-22s %s\n", verb, t.Key, t.Why())
	}
	return b.String()
}
