package build

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/checksums"
	"kubelet-toolchain/scripts/internal/pipeline/patch"
)

// driverPackages lay down a target's tree and compile it: a change to
// their code may change any target's bytes, so their sources are one of
// every target's inputs. Left out, as deciding no byte themselves: the
// matrix (its values that do are inputs of their own: the module sum, the
// series, the build line), checksums and glibc (they read binaries), and
// the tools module's execx (it runs commands).
var driverPackages = []string{
	"scripts/internal/pipeline/build",
	"scripts/internal/pipeline/source",
	"scripts/internal/pipeline/lock",
	"scripts/internal/pipeline/godeps",
	"scripts/internal/pipeline/gomod",
	"scripts/internal/pipeline/restore",
	"scripts/internal/pipeline/patch",
	"scripts/internal/pipeline/ctoolchain",
	"scripts/internal/base/fsutil",
}

// DriverDigest hashes the driver's Go sources (tests excluded) under the
// checkout root, by their path relative to it.
func DriverDigest(root string) (string, error) {
	var parts []string
	for _, pkg := range driverPackages {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil {
			return "", err
		}
		if len(files) == 0 {
			return "", fmt.Errorf("the build driver's package %s has no Go files under %s", pkg, root)
		}
		sort.Strings(files)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			sum, err := checksums.SHA256(f)
			if err != nil {
				return "", err
			}
			rel, _ := filepath.Rel(root, f)
			parts = append(parts, filepath.ToSlash(rel)+"="+sum)
		}
	}
	return "sha256:" + hashStrings(parts...), nil
}

// TargetKey names a target in CHECKSUMS.inputs: "1.9.11/patched".
func TargetKey(r *matrix.Release, t *Target) string { return r.Release + "/" + t.Name }

// InputsOf returns what decides t's bytes for o's release, computed
// without fetching or compiling anything and independent of where the
// checkout and _output lie:
//
//	source          the module zip's h1: sum (versions.yaml)
//	lock            the lock file
//	series.N.NAME   each series in application order: its patches' diffs
//	                (not their headers) and its overlay files
//	build           every output's go line and environment, the generate
//	                steps, the C toolchain pin
//	driver          the driver's code (DriverDigest)
func InputsOf(o Options, t *Target, driver string) (checksums.Inputs, error) {
	o = o.withDefaults()
	r := o.Release
	in := checksums.Inputs{{Name: "source", Digest: r.ModuleSum}}
	lockSum, err := checksums.SHA256(filepath.Join(o.Matrix.Root, r.Lock()))
	if errors.Is(err, fs.ErrNotExist) {
		hint := ""
		if r.StandIn != "" {
			hint = fmt.Sprintf(" (its module is not served here: pass its zip as KUBE_SOURCE_ZIP=..., or build the stand-in %s)", r.StandIn)
		}
		return nil, fmt.Errorf("release %s: no dependency lock %s: make lock VERSION=%s writes it%s", r.Release, r.Lock(), r.Release, hint)
	}
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", r.Release, err)
	}
	in = append(in, checksums.Input{Name: "lock", Digest: "sha256:" + lockSum})
	series, err := loadSeries(o.Matrix.Root, r, t.Series)
	if err != nil {
		return nil, err
	}
	for i, s := range series {
		d, err := seriesDigest(o.Matrix.Root, s)
		if err != nil {
			return nil, fmt.Errorf("release %s: series %s: %w", r.Release, s.Name, err)
		}
		in = append(in, checksums.Input{Name: fmt.Sprintf("series.%d.%s", i+1, s.Name), Digest: d})
	}
	in = append(in, checksums.Input{Name: "build", Digest: "sha256:" + buildLineDigest(o, t)})
	return append(in, checksums.Input{Name: "driver", Digest: driver}), nil
}

// seriesDigest hashes a series' files by their paths relative to the
// checkout: a patch from its first diff on (its header says why, and
// decides nothing), an overlay file whole.
func seriesDigest(root string, s *patch.Series) (string, error) {
	files, err := s.Files()
	if err != nil {
		return "", err
	}
	var parts []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if slices.Contains(s.Patches, f) {
			i := bytes.Index(data, []byte("\ndiff --git "))
			if i < 0 {
				return "", fmt.Errorf("%s: no diff in the patch", f)
			}
			data = data[i+1:]
		}
		rel, _ := filepath.Rel(root, f)
		parts = append(parts, filepath.ToSlash(rel), hashStrings(string(data)))
	}
	return "sha256:" + hashStrings(parts...), nil
}

// buildLineDigest hashes how t's outputs are compiled, with the paths of
// this checkout, its _output and the C toolchain's cache written as
// placeholders.
func buildLineDigest(o Options, t *Target) string {
	rel := strings.NewReplacer(o.OutputDir, "$OUTPUT", t.Paths.CToolchain, "$CTOOLCHAIN", o.Matrix.Root, "$ROOT")
	pin, _ := json.Marshal(o.Release.CToolchain)
	parts := []string{"sums=" + t.SumsFile, "ctoolchain=" + string(pin)}
	for _, st := range t.Generate {
		parts = append(parts, "generate="+st.Name)
	}
	for _, out := range t.Outputs {
		parts = append(parts, "output="+out.Name, rel.Replace(strings.Join(out.GoArgs, "\x00")), out.Package,
			rel.Replace(out.Dir), rel.Replace(strings.Join(out.Env, "\x00")))
	}
	return hashStrings(parts...)
}

// BuiltInputs reads the inputs t's binaries were built from (nil if t is
// not built, or was built before builds recorded them).
func BuiltInputs(r *matrix.Release, t *Target) (checksums.Inputs, error) {
	rec, err := checksums.LoadInputs(filepath.Join(t.Paths.Bin, InputsFile))
	if err != nil {
		return nil, err
	}
	return rec[TargetKey(r, t)], nil
}
