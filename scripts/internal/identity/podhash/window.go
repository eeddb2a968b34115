package podhash

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// windowSeries is the shared series with which a patched kubelet of
// 1.10 .. 1.18 keeps the containers any kubelet of the road 1.7 -> 1.18
// started (overlay container-hash-k111: it writes its own release's hash
// and accepts every other's; a container keeps the hash of the kubelet
// that started it, however many switches later).
const windowSeries = "container-hash-k111"

// onRoad says whether r is a release of the road 1.7 .. 1.18, across the
// go-spew -> JSON hash boundary.
func onRoad(r *matrix.Release) bool { return inMinors(r, roadFirst, roadLast) }

// The road's minors: the container hash window of container-hash-k111.
const roadFirst, roadLast = 7, 18

func hasWindow(r *matrix.Release) bool { return slices.Contains(r.Series.SharedFixes, windowSeries) }

// road are the matrix's releases of the road, oldest first.
func road(m *matrix.Matrix) []*matrix.Release { return releasesIn(m, roadFirst, roadLast) }

// inMinors says whether r is a built release (no stand-in) of 1.first ..
// 1.last.
func inMinors(r *matrix.Release, first, last int) bool {
	v := r.Version()
	return r.StandIn == "" && v.Major == 1 && v.Minor >= first && v.Minor <= last
}

// releasesIn are m's built releases of 1.first .. 1.last, oldest first.
func releasesIn(m *matrix.Matrix, first, last int) []*matrix.Release {
	var rs []*matrix.Release
	for i := range m.Releases {
		if r := &m.Releases[i]; inMinors(r, first, last) {
			rs = append(rs, r)
		}
	}
	return rs
}

// window is the property of the road: over the generated corpus and every
// road release's own manifests (API pods), each patched build with the
// window fix writes its vanilla build's hash and accepts the hash every
// other road release's vanilla build wrote, skips included (a kubelet may
// be two minors behind its API server, and rolls back); and between
// consecutive road releases the vanilla hashes differ for exactly the
// containers the two Container graphs predict (every one across the
// go-spew -> JSON boundary), so the kept containers are ones a vanilla
// switch recreates.
func (c *Crosscheck) window(ctx context.Context, dir string) error {
	rs := road(c.Matrix)
	if !slices.ContainsFunc(rs, hasWindow) {
		return nil
	}
	corpus := filepath.Join(dir, "corpus.json")
	if _, err := Corpus(corpus, c.Count, c.Seed, "", true); err != nil {
		return err
	}
	files := []string{corpus}
	for _, r := range rs {
		f := filepath.Join(dir, "manifests-"+r.Release+".json")
		if _, _, err := ReleaseManifests(ctx, r, f); err != nil {
			return err
		}
		files = append(files, f)
	}
	var bad []string
	for _, f := range files {
		vanilla := map[string][]Result{}
		for _, r := range rs {
			res, err := c.hash(ctx, r, matrix.Vanilla, f)
			if err != nil {
				return fmt.Errorf("%s vanilla refused a pod of %s: %w", r.Release, filepath.Base(f), err)
			}
			vanilla[r.Release] = res
		}
		for i := 1; i < len(rs); i++ {
			old, r := rs[i-1], rs[i]
			predicted, err := c.predictHashChanges(ctx, old, r, f)
			if err != nil {
				return err
			}
			changes, err := c.hashesChange(ctx, old, r)
			if err != nil {
				return err
			}
			a, b := vanilla[old.Release], vanilla[r.Release]
			differ := 0
			for j := range a {
				want, known := predicted[a[j].Key()]
				if want {
					differ++
				}
				if !known || a[j].Key() != b[j].Key() || (a[j].Hash != b[j].Hash) != want {
					bad = append(bad, fmt.Sprintf("%s: %s: vanilla %s %d, vanilla %s %d (the schema diff predicts a change: %v)",
						filepath.Base(f), a[j].Key(), old.Release, a[j].Hash, r.Release, b[j].Hash, want))
				}
			}
			if f == corpus && differ == 0 && changes {
				// The corpus sets the fields 1.12, 1.14 and 1.15 added,
				// and 1.16 changed every hash: it no longer shows the bug.
				bad = append(bad, fmt.Sprintf("%s: vanilla %s -> %s is predicted to recreate no container", filepath.Base(f), old.Release, r.Release))
			}
			fmt.Fprintf(c.Out, "ok  %s: vanilla %s -> %s recreates %d of %d containers, as the schema diff predicts\n",
				filepath.Base(f), old.Release, r.Release, differ, len(a))
		}
		for _, r := range rs {
			if !hasWindow(r) {
				continue
			}
			h, err := c.helper(ctx, r, matrix.Patched)
			if err != nil {
				return err
			}
			var from []string
			for _, old := range rs {
				stored := map[string]uint64{}
				for _, res := range vanilla[old.Release] {
					stored[res.Key()] = res.Hash
				}
				patched, err := h.Hash(ctx, f, stored)
				if err != nil {
					return fmt.Errorf("%s patched refused a pod of %s: %w", r.Release, filepath.Base(f), err)
				}
				own := vanilla[r.Release]
				for j := range patched {
					switch {
					case patched[j].Key() != own[j].Key() || patched[j].Hash != own[j].Hash:
						bad = append(bad, fmt.Sprintf("%s: %s: patched %s writes %d, vanilla %d", filepath.Base(f), patched[j].Key(), r.Release, patched[j].Hash, own[j].Hash))
					case patched[j].Accepted == nil || !*patched[j].Accepted:
						bad = append(bad, fmt.Sprintf("%s: %s: patched %s recreates what vanilla %s started (hash %d)", filepath.Base(f), patched[j].Key(), r.Release, old.Release, stored[patched[j].Key()]))
					}
				}
				if old != r {
					from = append(from, old.Release)
				}
			}
			fmt.Fprintf(c.Out, "ok  %s: patched %s writes vanilla %s's hash and keeps all %d containers vanilla %s started\n",
				filepath.Base(f), r.Release, r.Release, len(vanilla[r.Release]), strings.Join(from, ", "))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d containers break the road's hash property (first ones):\n  %s", len(bad), strings.Join(bad[:min(len(bad), 10)], "\n  "))
	}
	return nil
}
