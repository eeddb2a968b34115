package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/scripts/internal/pipeline/lock"
	"kubelet-toolchain/scripts/internal/pipeline/patch"
	"kubelet-toolchain/scripts/internal/pipeline/restore"
	"kubelet-toolchain/scripts/internal/pipeline/source"
)

// Pristine fetches the release's source into tree (which must not exist)
// and restores its dependencies, without applying any series: the tree
// every series applies to, which the RPM's Source0 and the Debian orig
// tarball carry. It runs a build's own fetch and restore stages.
func Pristine(ctx context.Context, o Options, tree string) error {
	o = o.withDefaults()
	res := &Result{}
	for _, st := range sourceStages(ctx, o) {
		if err := stage(o, "pristine", res, st.Name, func() error { return st.Run(tree) }); err != nil {
			return err
		}
	}
	return nil
}

// sourceStages are fetch and restore: the upstream tree with its
// dependencies, before any series.
func sourceStages(ctx context.Context, o Options) []Step {
	r := o.Release
	return []Step{
		{"fetch", func(tree string) error {
			zip, err := source.Zip(ctx, r, o.SourceZip)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(tree), 0o755); err != nil {
				return err
			}
			if err := source.Extract(zip, tree, r); err != nil {
				return err
			}
			// The official build's Go, as versions.yaml records it for the
			// fidelity checks and the docs, must be the tree's own.
			got, err := source.OfficialGo(tree)
			if err != nil {
				return fmt.Errorf("release %s: reading its official build's Go: %w", r.Release, err)
			}
			if got != r.OfficialGo {
				return fmt.Errorf("release %s: %s says officialGo %s, the tree's build/build-image/cross/VERSION says %s", r.Release, o.Matrix.File, r.OfficialGo, got)
			}
			return checkOfficialBuild(o.Matrix, r, tree)
		}},
		{"restore", func(tree string) error {
			l, err := lock.Load(filepath.Join(o.Matrix.Root, r.Lock()))
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s does not exist yet: run `make lock VERSION=%s` (with KUBE_SOURCE_ZIP=... if the proxy refuses the release)", r.Lock(), r.Release)
			} else if err != nil {
				return err
			}
			if r.Era == matrix.EraModules {
				return restore.Modules(ctx, tree, r.Go, l)
			}
			return restore.Godeps(ctx, tree, r.Go, l, func(done, total int, what string) {
				if done == total || done%10 == 0 || done <= 3 {
					fmt.Fprintf(o.Log, "    [%d/%d] %s\n", done, total, what)
				}
			})
		}},
	}
}

// checkOfficialBuild fails unless versions.yaml builds the release as its
// tree's official build did: the kubelet's cgo, the tags, and the control
// plane's commands static.
func checkOfficialBuild(m *matrix.Matrix, r *matrix.Release, tree string) error {
	b, err := source.ReadOfficialBuild(tree)
	if err != nil {
		return fmt.Errorf("release %s: reading its official build: %w", r.Release, err)
	}
	if got := b.CGO("kubelet"); got != r.CGO {
		return fmt.Errorf("release %s: %s says cgo: %v, the tree's hack/lib/golang.sh builds the kubelet with cgo %v (KUBE_STATIC_LIBRARIES %v)", r.Release, m.File, r.CGO, got, b.Static)
	}
	if !slices.Equal(b.Tags, r.Tags) {
		return fmt.Errorf("release %s: %s says tags: %q, the tree's hack/lib/golang.sh builds with tags %q", r.Release, m.File, r.Tags, b.Tags)
	}
	for _, c := range ControlPlaneCommands(r) {
		if b.CGO(c.Name) {
			return fmt.Errorf("release %s: the tree's hack/lib/golang.sh builds %s with cgo; the control plane builds it static", r.Release, c.Name)
		}
	}
	return nil
}

// patchStage applies the series in order.
func patchStage(ctx context.Context, o Options, series []*patch.Series) Step {
	return Step{"patch", func(tree string) error {
		for _, s := range series {
			results, err := s.Apply(ctx, tree)
			for _, pr := range results {
				fmt.Fprintf(o.Log, "    applied %s/%s\n", s.Name, pr.Patch)
				for _, off := range pr.Offsets {
					fmt.Fprintf(o.Log, "      %s\n", off)
				}
			}
			if err != nil {
				return err
			}
			if s.Overlay != "" {
				fmt.Fprintf(o.Log, "    overlaid overlay/%s\n", s.Name)
			}
		}
		return nil
	}}
}

// prepareTree runs steps on a tree in a temporary gopath next to the final
// one, writes the prepared marker once every step has passed, and only
// then renames the temporary gopath into place. A failed step leaves no
// tree and no marker behind; temporary trees of killed runs go first.
func prepareTree(o Options, t *Target, fp string, res *Result, steps []Step) error {
	p := t.Paths
	cleanStale(p.Dir)
	tmp, err := os.MkdirTemp(p.Dir, ".gopath.tmp-")
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			fsutil.RemoveAll(tmp)
		}
	}()
	for _, st := range steps {
		if err := stage(o, t.Name, res, st.Name, func() error { return st.Run(treeFrom(tmp)) }); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, preparedMarker), []byte(fp+"\n"), 0o644); err != nil {
		return err
	}
	if err := fsutil.ReplaceDir(tmp, p.GOPATH); err != nil {
		return err
	}
	keep = true
	return nil
}

// cleanStale removes temporary trees left by runs that were killed; the
// caller holds the directory's lock, so none of them is in use.
func cleanStale(dir string) {
	old, _ := filepath.Glob(filepath.Join(dir, ".gopath.tmp-*"))
	for _, d := range old {
		fsutil.RemoveAll(d)
	}
}

// prepareFingerprint hashes everything the prepared tree depends on: the
// release's entry, the source zip, the lock, every series file, the names
// of the generate steps and the driver's code (a tree prepared by older
// code is prepared again, so what a build records as its inputs is what
// it was built from).
func prepareFingerprint(o Options, t *Target, series []*patch.Series, driver string) (string, error) {
	entry, _ := json.Marshal(o.Release)
	parts := []string{"prepare-v2", string(entry), o.SourceZip, driver}
	for _, st := range t.Generate {
		parts = append(parts, "generate="+st.Name)
	}
	files := []string{filepath.Join(o.Matrix.Root, o.Release.Lock())}
	for _, s := range series {
		f, err := s.Files()
		if err != nil {
			return "", err
		}
		files = append(files, f...)
	}
	for _, f := range files {
		sum, err := checksums.SHA256(f)
		if errors.Is(err, fs.ErrNotExist) {
			sum = "absent" // a missing lock fails in the restore stage
		} else if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(o.Matrix.Root, f)
		parts = append(parts, rel+"="+sum)
	}
	return hashStrings(parts...), nil
}

func hashStrings(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func markerMatches(path, fp string) bool {
	data, err := os.ReadFile(path)
	f := strings.Fields(string(data))
	return err == nil && len(f) > 0 && f[0] == fp
}

// loadSeries loads the named patch series of a release, in order.
func loadSeries(root string, r *matrix.Release, names []string) ([]*patch.Series, error) {
	var series []*patch.Series
	for _, name := range names {
		s, err := patch.Load(root, name)
		if err != nil {
			return nil, fmt.Errorf("release %s: %w", r.Release, err)
		}
		series = append(series, s)
	}
	return series, nil
}
