package podhash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/identity/schemadiff"
	"kubelet-toolchain/scripts/internal/pipeline/source"
)

// Crosscheck is the cross-release property test: for every release whose
// patched build writes an older release's container hashes (hashBaseline
// in versions.yaml), the baseline's vanilla build and the patched build
// must agree on every container, the vanilla build must disagree exactly
// on the containers the two releases' schema diff predicts (every one for
// 1.7 -> 1.9; those with a volume mount or a securityContext for 1.7 ->
// 1.8), and a new image must change both. API pods: privileged and feature-gated
// containers are hashed as an API server with those gates stores them, so
// no feature gate is passed to the helpers. The releases that hash JSON
// (no hash patch) are checked step by step instead (jsonEra).
type Crosscheck struct {
	Matrix *matrix.Matrix
	// Count and Seed shape the generated corpus.
	Count int
	Seed  int64
	// Log receives the builds' progress, Out the results.
	Log, Out io.Writer
	// Only, when set, checks just these releases against their neighbours
	// (matrix.Neighbours: the releases beside them, their baselines and
	// the releases whose baseline they are), building nothing else.
	Only []string

	// built holds each release+variant's helper once built: a build links
	// the kubelet and the helper (about 10 s and 3 s), and a run asks for
	// each one up to ten times.
	built map[string]*Helper
	// graphs holds each release's Container graph once generated.
	graphs map[string]schemadiff.Graph
}

// helper builds r's helper of variant v once per run; each caller gets its
// own copy to set Options on.
func (c *Crosscheck) helper(ctx context.Context, r *matrix.Release, v matrix.Variant) (*Helper, error) {
	key := r.Release + "/" + string(v)
	if c.built[key] == nil {
		h, err := BuildFor(ctx, c.Matrix, r, v, c.Log)
		if err != nil {
			return nil, err
		}
		if c.built == nil {
			c.built = map[string]*Helper{}
		}
		c.built[key] = h
	}
	h := *c.built[key]
	return &h, nil
}

// releasesAtOnce is how many releases' helpers buildAll builds side by
// side. A warm build is mostly single-threaded: unpacking the tree,
// restoring its dependencies, linking the kubelet and the helper (16
// builds one after another: 296 s of a 307 s run in a clean clone, 2
// cores).
const releasesAtOnce = 2

// buildAll builds every release+variant's helper the checks ask for (both
// variants of every release that can be downloaded: the manifests are
// checked on all of them), releasesAtOnce releases at a time. A release's
// two variants are built one after the other: on empty caches the second
// compiles only what its series changed, side by side both would compile
// everything. Each release's progress is kept and written to Log in the
// matrix's order.
func (c *Crosscheck) buildAll(ctx context.Context) error {
	type job struct {
		r         *matrix.Release
		log       bytes.Buffer
		byVariant map[matrix.Variant]*Helper
	}
	var jobs []*job
	for i := range c.Matrix.Releases {
		if r := &c.Matrix.Releases[i]; r.StandIn == "" {
			jobs = append(jobs, &job{r: r, byVariant: map[matrix.Variant]*Helper{}})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(releasesAtOnce)
	for _, j := range jobs {
		g.Go(func() error {
			for _, v := range []matrix.Variant{matrix.Vanilla, matrix.Patched} {
				h, err := BuildFor(gctx, c.Matrix, j.r, v, &j.log)
				if err != nil {
					return err
				}
				j.byVariant[v] = h
			}
			return nil
		})
	}
	err := g.Wait()
	if c.built == nil {
		c.built = map[string]*Helper{}
	}
	for _, j := range jobs {
		c.Log.Write(j.log.Bytes())
		for v, h := range j.byVariant {
			c.built[j.r.Release+"/"+string(v)] = h
		}
	}
	return err
}

// checkedWith are the releases a change to those named is cross-checked
// against: their neighbours (matrix.Neighbours) and, for a patched
// kubelet that carries a window's fix, every release of the window, skips
// included, with their baselines: it keeps what each of them started (the
// road's container hashes, 1.7 .. 1.18; the static pod UIDs of 1.7 ..
// 1.12, 1.13 .. 1.20 and 1.20 .. 1.23). Its neighbours alone may derive as it does (1.19 and 1.20) and
// show no bug.
func checkedWith(m *matrix.Matrix, only []string) []string {
	with := m.Neighbours(only)
	add := func(o *matrix.Release) {
		for _, base := range []func(*matrix.Release) (*matrix.Release, error){m.Baseline, m.UIDBaseline} {
			if b, _ := base(o); b != nil && !slices.Contains(with, b.Release) {
				with = append(with, b.Release)
			}
		}
		if !slices.Contains(with, o.Release) {
			with = append(with, o.Release)
		}
	}
	for _, name := range only {
		r, err := m.Lookup(name)
		if err != nil {
			continue
		}
		if onRoad(r) && hasWindow(r) {
			for _, o := range road(m) {
				add(o)
			}
		}
		for _, w := range uidWindows {
			if w.holds(r) {
				for _, o := range w.releases(m) {
					add(o)
				}
			}
		}
	}
	return with
}

// Run checks the property on a generated corpus for every release with a
// hash baseline, and on the pods of every such release's own manifests
// under each release of the same baseline (1.9.11's add-ons under the
// patched 1.8.15 too); and the static pod UID property for every release
// with a UID baseline (1.13.12's is 1.12, with no hash baseline).
func (c *Crosscheck) Run(ctx context.Context) error {
	if len(c.Only) > 0 {
		with := checkedWith(c.Matrix, c.Only)
		fmt.Fprintf(c.Out, "cross-checking %s with %s\n", strings.Join(c.Only, ", "), strings.Join(with, ", "))
		c.Matrix = c.Matrix.Subset(with)
	}
	dir := filepath.Join(c.Matrix.OutputDir(), "crosscheck")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := c.buildAll(ctx); err != nil {
		return err
	}
	var lined []*matrix.Release
	corpus := filepath.Join(dir, "corpus.json")
	for i := range c.Matrix.Releases {
		r := &c.Matrix.Releases[i]
		old, err := c.Matrix.Baseline(r)
		if err != nil {
			return err
		}
		uidOld, err := c.Matrix.UIDBaseline(r)
		if err != nil {
			return err
		}
		if r.StandIn != "" {
			continue
		}
		if old != nil {
			lined = append(lined, r)
			if err := c.corpus(ctx, dir, old, r); err != nil {
				return err
			}
			if err := c.staticPrivileged(ctx, old, corpus); err != nil {
				return err
			}
		}
		if uidOld != nil {
			// A release with only a UID baseline (1.13.12: the container
			// hash does not change from 1.12) needs the corpus written.
			if old == nil {
				if _, err := Corpus(corpus, c.Count, c.Seed, "", true); err != nil {
					return err
				}
			}
			if err := c.staticUIDs(ctx, uidOld, r, corpus); err != nil {
				return err
			}
		}
	}
	if len(lined) == 0 && len(c.Only) == 0 {
		return fmt.Errorf("no release in %s has a hashBaseline: nothing to cross-check", c.Matrix.File)
	}
	for _, of := range lined {
		var same []*matrix.Release
		for _, r := range lined {
			if r.HashBaseline == of.HashBaseline {
				same = append(same, r)
			}
		}
		if err := c.manifests(ctx, filepath.Join(dir, "manifests-"+of.Release+".json"), of, same); err != nil {
			return err
		}
	}
	if err := c.jsonEra(ctx, dir); err != nil {
		return err
	}
	if err := c.window(ctx, dir); err != nil {
		return err
	}
	return c.uidWalk(ctx, dir)
}

// hash runs the helper of a release+variant on a pods file.
func (c *Crosscheck) hash(ctx context.Context, r *matrix.Release, v matrix.Variant, pods string) ([]Result, error) {
	h, err := c.helper(ctx, r, v)
	if err != nil {
		return nil, err
	}
	return h.Hash(ctx, pods, nil)
}

func (c *Crosscheck) corpus(ctx context.Context, dir string, old, r *matrix.Release) error {
	a, b := filepath.Join(dir, "corpus.json"), filepath.Join(dir, "corpus-new-images.json")
	count, err := Corpus(a, c.Count, c.Seed, "", true)
	if err != nil {
		return err
	}
	if _, err := Corpus(b, c.Count, c.Seed, "-new", true); err != nil {
		return err
	}
	var res [5][]Result
	for i, step := range []struct {
		r    *matrix.Release
		v    matrix.Variant
		pods string
	}{{old, matrix.Vanilla, a}, {r, matrix.Patched, a}, {r, matrix.Vanilla, a}, {old, matrix.Vanilla, b}, {r, matrix.Patched, b}} {
		if res[i], err = c.hash(ctx, step.r, step.v, step.pods); err != nil {
			return err
		}
		if len(res[i]) != count {
			return fmt.Errorf("a helper reported %d containers, the corpus has %d", len(res[i]), count)
		}
	}
	base, patched, vanilla, baseNew, patchedNew := res[0], res[1], res[2], res[3], res[4]
	predicted, err := c.predictHashChanges(ctx, old, r, a)
	if err != nil {
		return err
	}
	var bad []string
	mismatches, differ := 0, 0
	for i := range base {
		k := base[i].Key()
		want, known := predicted[k]
		if want {
			differ++
		}
		var msg string
		switch {
		case !known:
			msg = fmt.Sprintf("%s: not in the corpus the prediction read", k)
		case base[i].Hash != patched[i].Hash:
			msg = fmt.Sprintf("%s: %s %d, patched %s %d", k, old.Release, base[i].Hash, r.Release, patched[i].Hash)
		case (vanilla[i].Hash != base[i].Hash) != want:
			msg = fmt.Sprintf("%s: vanilla %s %d, %s %d; the schema diff predicts they differ: %v", k, r.Release, vanilla[i].Hash, old.Release, base[i].Hash, want)
		case baseNew[i].Hash == base[i].Hash || patchedNew[i].Hash == patched[i].Hash:
			msg = fmt.Sprintf("%s: a new image leaves the hash unchanged", k)
		default:
			continue
		}
		if mismatches++; len(bad) < 10 {
			bad = append(bad, msg)
		}
	}
	if mismatches > 0 {
		return fmt.Errorf("%d of %d containers break the property (first ones):\n  %s", mismatches, count, strings.Join(bad, "\n  "))
	}
	data, err := os.ReadFile(a)
	if err != nil {
		return err
	}
	corpus := string(data)
	newer := strings.Count(corpus, "allowPrivilegeEscalation") + strings.Count(corpus, "mountPropagation") + strings.Count(corpus, "volumeDevices")
	if differ == 0 {
		return fmt.Errorf("no container of the corpus is predicted to change hash between %s and %s: it no longer shows the bug", old.Release, r.Release)
	}
	fmt.Fprintf(c.Out, "ok  %d containers (%d settings of 1.8/1.9-only fields, %d privileged): %s vanilla == %s patched for all, %s vanilla differs for exactly the %d the schema diff predicts, a new image changes both\n",
		count, newer, strings.Count(corpus, `"privileged"`), old.Release, r.Release, r.Release, differ)
	return nil
}

// manifests runs the same property over the pods of release of's own
// manifests (add-ons, examples, e2e manifests), as API pods, for each
// release of targets: every build of every release served here must
// accept every one of them.
func (c *Crosscheck) manifests(ctx context.Context, path string, of *matrix.Release, targets []*matrix.Release) error {
	pods, _, err := ReleaseManifests(ctx, of, path)
	if err != nil {
		return err
	}
	results := map[string][]Result{}
	for i := range c.Matrix.Releases {
		other := &c.Matrix.Releases[i]
		if other.StandIn != "" {
			continue
		}
		for _, v := range matrix.Variants {
			res, err := c.hash(ctx, other, v, path)
			if err != nil {
				return fmt.Errorf("%s %s refused a pod of %s's manifest corpus: %w", other.Release, v, of.Release, err)
			}
			results[other.Release+"/"+string(v)] = res
		}
	}
	for _, r := range targets {
		old, err := c.Matrix.Baseline(r)
		if err != nil {
			return err
		}
		base, patched, vanilla := results[old.Release+"/vanilla"], results[r.Release+"/patched"], results[r.Release+"/vanilla"]
		predicted, err := c.predictHashChanges(ctx, old, r, path)
		if err != nil {
			return err
		}
		var bad []string
		differ := 0
		for i := range base {
			want, known := predicted[base[i].Key()]
			if want {
				differ++
			}
			if !known || base[i].Hash != patched[i].Hash || (base[i].Hash != vanilla[i].Hash) != want {
				bad = append(bad, fmt.Sprintf("%s: %s %d, patched %s %d, vanilla %s %d (schema diff predicts a change: %v)", base[i].Key(), old.Release, base[i].Hash, r.Release, patched[i].Hash, r.Release, vanilla[i].Hash, want))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%d of %d containers of %s's manifests break the property under %s:\n  %s", len(bad), len(base), of.Release, r.Release, strings.Join(bad[:min(len(bad), 10)], "\n  "))
		}
		fmt.Fprintf(c.Out, "ok  %d pods, %d containers of %s's own manifests: accepted as API pods by all %d builds; %s vanilla == %s patched for every container, %s vanilla differs for exactly the %d the schema diff predicts\n",
			pods, len(base), of.Release, len(results), old.Release, r.Release, r.Release, differ)
	}
	return nil
}

// ReleaseManifests writes the pods of release r's own manifests (see
// ManifestCorpus) to out, from its verified module zip.
func ReleaseManifests(ctx context.Context, r *matrix.Release, out string) (pods int, skipped []string, err error) {
	if out == "" {
		return 0, nil, fmt.Errorf("no output file given (--out)")
	}
	zip, err := source.Zip(ctx, r, "")
	if err != nil {
		return 0, nil, err
	}
	return ManifestCorpus(zip, source.ModulePath+"@"+r.ModuleVersion()+"/", out)
}

// Bench hashes a generated corpus of about count containers (written to
// pods) with h three times and returns the best time and the corpus size.
func Bench(ctx context.Context, h *Helper, pods string, count int) (time.Duration, int, error) {
	if err := os.MkdirAll(filepath.Dir(pods), 0o755); err != nil {
		return 0, 0, err
	}
	count, err := Corpus(pods, count, 7, "", false)
	if err != nil {
		return 0, 0, err
	}
	best := time.Duration(1<<63 - 1)
	for i := 0; i < 3; i++ {
		start := time.Now()
		res, err := h.Hash(ctx, pods, nil)
		if err != nil {
			return 0, 0, err
		}
		if len(res) != count {
			return 0, 0, fmt.Errorf("hashed %d of %d containers", len(res), count)
		}
		best = min(best, time.Since(start))
	}
	return best, count, nil
}

// staticPrivileged checks the static pod path honours --allow-privileged as
// the release's kubelet does: with the release's default (false for 1.7 and
// 1.9) exactly the corpus pods with a privileged container are rejected,
// each as a result; with --allow-privileged=true none is.
func (c *Crosscheck) staticPrivileged(ctx context.Context, r *matrix.Release, pods string) error {
	data, err := os.ReadFile(pods)
	if err != nil {
		return err
	}
	var list struct {
		Items []struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
			Spec     struct {
				InitContainers, Containers []struct {
					SecurityContext struct{ Privileged bool } `json:"securityContext"`
				}
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, it := range list.Items {
		for _, ct := range append(it.Spec.InitContainers, it.Spec.Containers...) {
			if ct.SecurityContext.Privileged {
				want[it.Metadata.Namespace+"/"+it.Metadata.Name] = true
			}
		}
	}
	h, err := c.helper(ctx, r, matrix.Vanilla)
	if err != nil {
		return err
	}
	rejected := func(allow *bool) (map[string]bool, error) {
		h.Options = Options{Source: SourceStatic, AllowPrivileged: allow}
		res, err := h.Hash(ctx, pods, nil)
		out := map[string]bool{}
		for _, x := range res {
			if x.Rejected != "" {
				if !strings.Contains(x.Rejected, "privileged") {
					return nil, fmt.Errorf("%s static: %s rejected for another reason: %s", r.Release, x.Pod, x.Rejected)
				}
				out[x.Pod] = true
			}
		}
		return out, err
	}
	byDefault, err := rejected(nil)
	if err != nil {
		return err
	}
	allowed := true
	withFlag, err := rejected(&allowed)
	if err != nil {
		return err
	}
	if !maps.Equal(byDefault, want) || len(withFlag) != 0 || len(want) == 0 {
		return fmt.Errorf("%s static pods: %d pods have a privileged container, %d were rejected by default, %d with --allow-privileged=true",
			r.Release, len(want), len(byDefault), len(withFlag))
	}
	fmt.Fprintf(c.Out, "ok  %s static pod path: the %d pods with a privileged container are rejected (as results) without --allow-privileged, none with it\n", r.Release, len(want))
	return nil
}

// staticUIDs checks the static pod UID property on the corpus as static
// pods (those without metadata.uid, about half): the patched r derives the
// UID old's vanilla kubelet derives for every pod both accept, and r's
// vanilla kubelet derives another one for every such pod.
func (c *Crosscheck) staticUIDs(ctx context.Context, old, r *matrix.Release, pods string) error {
	uids := func(rel *matrix.Release, v matrix.Variant) (map[string]string, error) {
		res, err := c.staticPods(ctx, rel, v, pods)
		out := map[string]string{}
		for pod, x := range res {
			out[pod] = x.UID
		}
		return out, err
	}
	base, err := uids(old, matrix.Vanilla)
	if err != nil {
		return err
	}
	patched, err := uids(r, matrix.Patched)
	if err != nil {
		return err
	}
	vanilla, err := uids(r, matrix.Vanilla)
	if err != nil {
		return err
	}
	var bad []string
	compared := 0
	for pod, want := range base {
		got, ok := patched[pod]
		if !ok {
			continue // refused by r (a field its validation rejects)
		}
		compared++
		switch {
		case got != want:
			bad = append(bad, fmt.Sprintf("%s: %s derives %s, patched %s %s", pod, old.Release, want, r.Release, got))
		case vanilla[pod] == want:
			bad = append(bad, fmt.Sprintf("%s: vanilla %s derives %s's UID %s: the corpus no longer shows the bug", pod, r.Release, old.Release, want))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d of %d static pods without metadata.uid break the UID property (first ones):\n  %s", len(bad), compared, strings.Join(bad[:min(len(bad), 10)], "\n  "))
	}
	if compared < len(base)/4 {
		return fmt.Errorf("only %d of the %d static pods without metadata.uid that %s accepts were compared", compared, len(base), old.Release)
	}
	fmt.Fprintf(c.Out, "ok  %d static pods without metadata.uid (of %d %s accepts): %s vanilla UID == %s patched UID for all, %s vanilla differs for all\n",
		compared, len(base), old.Release, old.Release, r.Release, r.Release)
	return nil
}

// staticPods runs a release+variant's helper on pods as static pods (all
// privileged containers allowed) and returns, by namespace/name, the pods
// without metadata.uid it accepts.
func (c *Crosscheck) staticPods(ctx context.Context, r *matrix.Release, v matrix.Variant, pods string) (map[string]Result, error) {
	h, err := c.helper(ctx, r, v)
	if err != nil {
		return nil, err
	}
	allowed := true
	h.Options = Options{Source: SourceStatic, AllowPrivileged: &allowed}
	res, err := h.Hash(ctx, pods, nil)
	out := map[string]Result{}
	for _, x := range res {
		if x.UIDDerived && x.Rejected == "" {
			out[x.Pod] = x
		}
	}
	return out, err
}
