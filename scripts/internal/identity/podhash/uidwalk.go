package podhash

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// uidWindows are the minor releases whose static pod UIDs a fix knows
// (its legacyuid.Releases), with the series that carry it: 1.7 .. 1.12
// (static-pod-uid-k111 on 1.10.13 .. 1.12.10, in place of the road's
// derivations; k19-fixes on 1.9.11, which knows 1.10 .. 1.12's beside
// 1.7's, 1.8's and its own), the road 1.13 .. 1.20 (static-pod-uid-k113)
// and 1.20 .. 1.23 (static-pod-uid-k121). 1.20.15 is in both of the last
// and carries the road's.
var uidWindows = []uidWindowSpec{
	{7, 12, []string{"static-pod-uid-k111", "k19-fixes"}},
	{13, 20, []string{"static-pod-uid-k113"}},
	{20, 23, []string{"static-pod-uid-k121"}},
}

type uidWindowSpec struct {
	first, last int
	series      []string // a release carries the fix when it has one of them
}

// releases are m's releases in the window, oldest first.
func (w uidWindowSpec) releases(m *matrix.Matrix) []*matrix.Release {
	return releasesIn(m, w.first, w.last)
}

// holds reports whether r's patched build is held to the window: r is in
// it and carries its fix.
func (w uidWindowSpec) holds(r *matrix.Release) bool {
	if !inMinors(r, w.first, w.last) {
		return false
	}
	for _, s := range w.series {
		if r.Series.Fixes == s || slices.Contains(r.Series.SharedFixes, s) {
			return true
		}
	}
	return false
}

// uidWalk checks the static pod UID property of each window.
func (c *Crosscheck) uidWalk(ctx context.Context, dir string) error {
	for _, w := range uidWindows {
		if err := c.uidWindow(ctx, dir, w.releases(c.Matrix), w); err != nil {
			return err
		}
	}
	return nil
}

// uidWindow is the static pod UID property of a window's releases rs, on
// the corpus as static pods (those without metadata.uid): every patched
// build that keeps other releases' UIDs (the fix) derives its vanilla
// build's UID for a pod that runs nowhere yet, and keeps each pod under
// the UID the vanilla kubelet of every other release of the window
// derived; the vanilla UIDs of neighbouring releases differ where the fix
// matters. A release with a UID baseline (1.13.12: 1.12's) gives new pods
// the baseline's UID instead (staticUIDs). Only the patched builds that
// carry the window's fix (w.holds) are held to it.
func (c *Crosscheck) uidWindow(ctx context.Context, dir string, rs []*matrix.Release, w uidWindowSpec) error {
	if len(rs) < 2 {
		return nil
	}
	corpus := filepath.Join(dir, "corpus.json")
	if _, err := Corpus(corpus, c.Count, c.Seed, "", true); err != nil {
		return err
	}
	vanilla, patched := map[string]map[string]Result{}, map[string]map[string]Result{}
	for _, r := range rs {
		var err error
		if vanilla[r.Release], err = c.staticPods(ctx, r, matrix.Vanilla, corpus); err != nil {
			return err
		}
		if patched[r.Release], err = c.staticPods(ctx, r, matrix.Patched, corpus); err != nil {
			return err
		}
	}
	var bad []string
	for _, b := range rs {
		for pod, p := range patched[b.Release] {
			// A release with a UID baseline gives new pods the baseline's
			// (staticUIDs checks that).
			if v, ok := vanilla[b.Release][pod]; ok && b.UIDBaseline == "" && p.UID != v.UID {
				bad = append(bad, fmt.Sprintf("%s: patched %s gives a new pod %s, its vanilla build %s", pod, b.Release, p.UID, v.UID))
			}
		}
		if !w.holds(b) {
			continue // b carries another window's fix (1.20.15 in 1.20 .. 1.23's: the road's)
		}
		// The corpus must show the bug: a vanilla switch into b from some
		// release of the window replaces every pod.
		for pod, vb := range vanilla[b.Release] {
			replaced := false
			for _, a := range rs {
				if va, ok := vanilla[a.Release][pod]; ok && va.UID != vb.UID {
					replaced = true
				}
			}
			if !replaced {
				bad = append(bad, fmt.Sprintf("%s: every vanilla release of the window derives %s's UID %s: the corpus no longer shows the bug", pod, b.Release, vb.UID))
			}
		}
		var kept []string
		for _, a := range rs {
			if a == b {
				continue
			}
			n := 0
			for pod, va := range vanilla[a.Release] {
				p, ok := patched[b.Release][pod]
				if !ok {
					continue // refused by b
				}
				n++
				if !slices.Contains(p.UIDsKept, va.UID) {
					bad = append(bad, fmt.Sprintf("%s: vanilla %s derives %s, patched %s keeps only %v", pod, a.Release, va.UID, b.Release, p.UIDsKept))
				}
			}
			kept = append(kept, fmt.Sprintf("%s's (%d pods)", a.Release, n))
		}
		if len(bad) == 0 {
			gets := "vanilla " + b.Release + "'s UID"
			if b.UIDBaseline != "" {
				gets = b.UIDBaseline + "'s UID (its baseline)"
			}
			fmt.Fprintf(c.Out, "ok  patched %s: a new static pod gets %s (%d pods); a running one keeps vanilla %s\n",
				b.Release, gets, len(patched[b.Release]), strings.Join(kept, ", "))
		}
	}
	for i := 1; i < len(rs); i++ {
		a, b := rs[i-1], rs[i]
		n, differ := 0, 0
		for pod, va := range vanilla[a.Release] {
			if vb, ok := vanilla[b.Release][pod]; ok {
				n++
				if va.UID != vb.UID {
					differ++
				}
			}
		}
		fmt.Fprintf(c.Out, "    vanilla %s -> %s: %d of %d static pods without metadata.uid get another UID (replaced at the switch)\n", a.Release, b.Release, differ, n)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d static pods break the static pod UID property of %s .. %s (first ones):\n  %s", len(bad), rs[0].Release, rs[len(rs)-1].Release, strings.Join(bad[:min(len(bad), 10)], "\n  "))
	}
	return nil
}
