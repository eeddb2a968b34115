package build

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/checksums"
	"kubelet-toolchain/scripts/internal/execx"
	"kubelet-toolchain/scripts/internal/fsutil"
	"kubelet-toolchain/scripts/internal/matrix"
)

// ControlPlaneCommand is one binary of the control plane and the package
// it is built from (relative to k8s.io/kubernetes; 1.9's scheduler still
// lives under plugin/).
type ControlPlaneCommand struct {
	Name, Package string
}

// ControlPlaneCommands are the control plane's binaries, in build order.
// kube-proxy is here because it is built the same way (static, from the
// same tree); the rehearsal's nodes run it so that Services work.
var ControlPlaneCommands = []ControlPlaneCommand{
	{"kube-apiserver", "cmd/kube-apiserver"},
	{"kube-controller-manager", "cmd/kube-controller-manager"},
	{"kube-scheduler", "plugin/cmd/kube-scheduler"},
	{"kubectl", "cmd/kubectl"},
	{"kube-proxy", "cmd/kube-proxy"},
}

// ControlPlaneVariant names the control plane's directory under
// _output/<release>/ and its builds in progress lines; it is not a kubelet
// variant.
const ControlPlaneVariant matrix.Variant = "control-plane"

// ControlPlanePaths are where a release's control plane lives under _output/.
type ControlPlanePaths struct {
	Dir    string // _output/<release>/control-plane
	GOPATH string // Dir/gopath
	Tree   string // GOPATH/src/k8s.io/kubernetes
	Bin    string // Dir/bin: every binary, replaced as a whole
}

// ControlPlanePathsFor returns the control plane's layout under an output dir.
func ControlPlanePathsFor(output, release string) ControlPlanePaths {
	p := PathsFor(output, release, ControlPlaneVariant)
	return ControlPlanePaths{Dir: p.Dir, GOPATH: p.GOPATH, Tree: p.Tree, Bin: filepath.Join(p.Dir, "bin")}
}

// Binary is the path of one built command.
func (p ControlPlanePaths) Binary(name string) string { return filepath.Join(p.Bin, name) }

// ControlPlaneResult reports what a control-plane build did.
type ControlPlaneResult struct {
	// SHA256 maps each command's name to its binary's sha256.
	SHA256   map[string]string
	Stages   []Timing
	UpToDate bool
}

// ErrNoControlPlane is returned for a release without a control-plane series.
var ErrNoControlPlane = errors.New("no control-plane build for this release")

// ControlPlaneReleases lists the releases that name a control-plane series.
func ControlPlaneReleases(m *matrix.Matrix) []string {
	var out []string
	for _, r := range m.Releases {
		if r.Series.ControlPlane != "" {
			out = append(out, r.Release)
		}
	}
	return out
}

// ControlPlaneSupported fails, naming the releases that have one, unless
// r has a control-plane build.
func ControlPlaneSupported(m *matrix.Matrix, r *matrix.Release) error {
	if r.Series.ControlPlane == "" {
		return fmt.Errorf("release %s: %w: control-plane is built for %s only (the releases whose versions.yaml entry names a series.controlPlane)",
			r.Release, ErrNoControlPlane, strings.Join(ControlPlaneReleases(m), ", "))
	}
	if r.Era != matrix.EraGodeps {
		return fmt.Errorf("release %s: control-plane builds are implemented for GOPATH (godeps-era) trees only", r.Release)
	}
	return nil
}

// RunControlPlane builds the release's control-plane binaries from its
// vanilla tree plus the control-plane series, reusing the prepared tree and
// the binaries when their inputs have not changed. The binaries are built
// into a temporary directory, each checked (it runs, prints the stamped
// version and commit, carries no insecure GODEBUG default), and the
// directory replaces bin/ as a whole: a killed or failed run leaves the
// previous complete set or none, never a mix.
func RunControlPlane(ctx context.Context, o Options) (*ControlPlaneResult, error) {
	r := o.Release
	if err := ControlPlaneSupported(o.Matrix, r); err != nil {
		return nil, err
	}
	names := r.Series.ForControlPlane()
	if o.OutputDir == "" {
		o.OutputDir = o.Matrix.OutputDir()
	}
	o.Variant = ControlPlaneVariant
	p := ControlPlanePathsFor(o.OutputDir, r.Release)
	series, err := loadSeries(o.Matrix.Root, r, names)
	if err != nil {
		return nil, err
	}
	base, err := prepareFingerprint(o, series)
	if err != nil {
		return nil, err
	}
	prepFP := hashStrings(base, "control-plane-v1", openAPIPackage)
	args, env := controlPlaneCompileCommand(r, p.GOPATH)
	buildParts := []string{prepFP, strings.Join(args, "\x00"), strings.Join(env, "\x00")}
	for _, c := range ControlPlaneCommands {
		buildParts = append(buildParts, c.Name+"="+c.Package)
	}
	buildFP := hashStrings(buildParts...)

	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockDir(p.Dir, o.Log)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res := &ControlPlaneResult{}
	paths := Paths{Dir: p.Dir, GOPATH: p.GOPATH, Tree: p.Tree}
	prepared := markerMatches(filepath.Join(p.GOPATH, preparedMarker), prepFP)
	if sums, ok := controlPlaneUpToDate(p, buildFP); ok && prepared {
		res.SHA256, res.UpToDate = sums, true
		return res, nil
	}
	var timings Result
	if !prepared {
		stages := append(sourceStages(ctx, o), patchStage(ctx, o, series), generateStage(ctx, o))
		if err := prepareTree(o, paths, prepFP, &timings, stages); err != nil {
			res.Stages = timings.Stages
			return nil, err
		}
	}
	err = stage(o, &timings, "compile", func() error {
		sums, err := compileControlPlane(ctx, o, p, args, env, buildFP)
		res.SHA256 = sums
		return err
	})
	res.Stages = timings.Stages
	if err != nil {
		return nil, err
	}
	return res, nil
}

// controlPlaneCompileCommand is the go build line of every control-plane
// command: the kubelet's reproducible flags, stamped with the control
// plane's version, and static (CGO_ENABLED=0) as upstream builds these
// commands (hack/lib/golang.sh KUBE_STATIC_LIBRARIES), so they run in any
// node image.
func controlPlaneCompileCommand(r *matrix.Release, gopath string) (args, env []string) {
	return compileCommand(r, versionVars(r, r.ControlPlaneGitVersion()), nil, false, gopath)
}

// compileControlPlane builds every command into a temporary bin directory
// next to bin/, checks each binary, writes SHA256SUMS and the built marker
// into it, and moves it into place.
func compileControlPlane(ctx context.Context, o Options, p ControlPlanePaths, args, env []string, fp string) (map[string]string, error) {
	old, _ := filepath.Glob(filepath.Join(p.Dir, ".bin.tmp-*"))
	for _, d := range old {
		fsutil.RemoveAll(d)
	}
	tmp, err := os.MkdirTemp(p.Dir, ".bin.tmp-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return nil, err
	}
	defer fsutil.RemoveAll(tmp) // gone after the rename; only a failure leaves it to remove
	r := o.Release
	sums := map[string]string{}
	for _, c := range ControlPlaneCommands {
		start := time.Now()
		bin := filepath.Join(tmp, c.Name)
		if _, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: append(append([]string{}, args...), "-o", bin, "k8s.io/kubernetes/"+c.Package), Dir: p.GOPATH, Env: env}); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		if err := CheckGODEBUG(bin); err != nil {
			return nil, err
		}
		if err := CheckControlPlaneVersion(ctx, bin, c.Name, r.ControlPlaneGitVersion(), r.GitCommit); err != nil {
			return nil, err
		}
		sum, err := checksums.SHA256(bin)
		if err != nil {
			return nil, err
		}
		sums[c.Name] = sum
		fi, _ := os.Stat(bin)
		fmt.Fprintf(o.Log, "    %s %.1f MB in %s\n", c.Name, float64(fi.Size())/1e6, time.Since(start).Round(100*time.Millisecond))
	}
	f := checksums.File{}
	for name, sum := range sums {
		f[name] = sum
	}
	if err := os.WriteFile(filepath.Join(tmp, "SHA256SUMS"), f.Lines(), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, builtMarker), []byte(fp+"\n"), 0o644); err != nil {
		return nil, err
	}
	if err := fsutil.ReplaceDir(tmp, p.Bin); err != nil {
		return nil, err
	}
	return sums, nil
}

// controlPlaneUpToDate reports whether bin/ was built from these inputs, is
// complete and unchanged, and the tree was not edited since.
func controlPlaneUpToDate(p ControlPlanePaths, fp string) (map[string]string, bool) {
	marker := filepath.Join(p.Bin, builtMarker)
	if !markerMatches(marker, fp) {
		return nil, false
	}
	if fi, err := os.Stat(marker); err != nil || treeChangedSince(p.Tree, fi.ModTime()) {
		return nil, false
	}
	want, err := checksums.Load(filepath.Join(p.Bin, "SHA256SUMS"))
	if err != nil || len(want) != len(ControlPlaneCommands) {
		return nil, false
	}
	for _, c := range ControlPlaneCommands {
		sum, err := checksums.SHA256(p.Binary(c.Name))
		if err != nil || sum != want[c.Name] {
			return nil, false
		}
	}
	return want, true
}

// generateStage makes what upstream's build generates and the module zip
// lacks, and gives every control-plane command the kubelet's GODEBUG
// defaults file.
func generateStage(ctx context.Context, o Options) prepStage {
	return prepStage{"generate", func(tree string) error {
		if err := spreadGODEBUG(tree); err != nil {
			return err
		}
		return generateOpenAPI(ctx, o.Release, filepath.Dir(filepath.Dir(filepath.Dir(tree))), o.Log)
	}}
}

// godebugFile is the defaults series' file in cmd/kubelet. //go:debug lines
// count only in the main package, so each command needs its own copy.
const godebugFile = "cmd/kubelet/zz_godebug.go"

func spreadGODEBUG(tree string) error {
	data, err := os.ReadFile(filepath.Join(tree, godebugFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no defaults series: CheckGODEBUG refuses the binaries
	} else if err != nil {
		return err
	}
	for _, c := range ControlPlaneCommands {
		dst := filepath.Join(tree, c.Package, "zz_godebug.go")
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("laying %s into %s: %w", godebugFile, c.Package, err)
		}
	}
	return nil
}

// openAPIPackage is where upstream's build writes the generated OpenAPI
// definitions kube-apiserver compiles in.
const openAPIPackage = "k8s.io/kubernetes/pkg/generated/openapi"

// generateOpenAPI does what build/root/Makefile.generated_files does for
// gen_openapi: build the tree's own openapi-gen and run it over every
// package with a +k8s:openapi-gen= tag. The boilerplate's YEAR is the
// release's build year (openapi-gen would put the current year in), so the
// prepared tree is the same on every run.
func generateOpenAPI(ctx context.Context, r *matrix.Release, gopath string, log io.Writer) error {
	tree := treeFrom(gopath)
	scratch, err := os.MkdirTemp("", "openapi-gen-")
	if err != nil {
		return err
	}
	defer fsutil.RemoveAll(scratch)
	env := []string{"GOTOOLCHAIN=" + r.Go, "GO111MODULE=off", "GOFLAGS=", "GOWORK=off", "CGO_ENABLED=0", "GOPATH=" + gopath}
	gen := filepath.Join(scratch, "openapi-gen")
	if _, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: []string{"build", "-o", gen, "k8s.io/kubernetes/vendor/k8s.io/code-generator/cmd/openapi-gen"}, Dir: gopath, Env: env}); err != nil {
		return fmt.Errorf("building openapi-gen: %w", err)
	}
	dirs, err := OpenAPIDirs(tree)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return fmt.Errorf("no package of %s carries a +k8s:openapi-gen= tag", tree)
	}
	header, err := os.ReadFile(filepath.Join(tree, "hack/boilerplate/boilerplate.go.txt"))
	if err != nil {
		return err
	}
	headerFile := filepath.Join(scratch, "boilerplate.go.txt")
	year := fmt.Sprint(r.BuildDate.UTC().Year())
	if err := os.WriteFile(headerFile, []byte(strings.ReplaceAll(string(header), "YEAR", year)), 0o644); err != nil {
		return err
	}
	var pkgs []string
	for _, d := range dirs {
		pkgs = append(pkgs, "k8s.io/kubernetes/"+d)
	}
	out := filepath.Join(tree, "pkg/generated/openapi/zz_generated.openapi.go")
	os.Remove(out)
	if _, err := execx.Run(ctx, execx.Cmd{Name: gen, Args: []string{"-i", strings.Join(pkgs, ","), "-p", openAPIPackage,
		"-O", "zz_generated.openapi", "-h", headerFile, "-o", filepath.Join(gopath, "src")}, Dir: tree, Env: env}); err != nil {
		return fmt.Errorf("openapi-gen: %w", err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return fmt.Errorf("openapi-gen wrote no %s: %w", out, err)
	}
	fmt.Fprintf(log, "    generated pkg/generated/openapi/zz_generated.openapi.go from %d packages (%d kB)\n", len(pkgs), fi.Size()/1000)
	return nil
}

// openAPIRoots are the directories upstream's generators search
// (hack/make-rules/helpers/cache_go_dirs.sh): the tree without vendor/,
// staging/, docs/, examples/ and hidden or _ directories, plus these
// staging repositories through their vendor/ symlinks.
var openAPIRoots = []string{"apimachinery", "apiserver", "kube-aggregator", "apiextensions-apiserver", "metrics",
	"sample-apiserver", "api", "client-go", "code-generator", "sample-controller"}

var (
	k8sTag     = regexp.MustCompile(`(?m)^// *\+k8s:`)
	openAPITag = []byte("+k8s:openapi-gen=")
)

// OpenAPIDirs lists, sorted and relative to the tree, the directories with
// a Go file that has a `// +k8s:` tag line and mentions +k8s:openapi-gen=,
// as the generated-files Makefile selects them.
func OpenAPIDirs(tree string) ([]string, error) {
	found := map[string]bool{}
	visit := func(root string, prune func(rel string) bool) error {
		return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(tree, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if path != root && prune(rel) {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if k8sTag.Match(data) && strings.Contains(string(data), string(openAPITag)) {
				found[filepath.ToSlash(filepath.Dir(rel))] = true
			}
			return nil
		})
	}
	top := func(rel string) bool {
		switch rel {
		case "vendor", "staging", "docs", "examples":
			return true
		}
		return !strings.Contains(rel, "/") && (strings.HasPrefix(rel, "_") || strings.HasPrefix(rel, "."))
	}
	if err := visit(tree, top); err != nil {
		return nil, err
	}
	for _, name := range openAPIRoots {
		// WalkDir does not follow a symlinked root; resolve it as find -H does.
		link := filepath.Join(tree, "vendor", "k8s.io", name)
		target, err := filepath.EvalSymlinks(link)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		err = filepath.WalkDir(target, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if k8sTag.Match(data) && strings.Contains(string(data), string(openAPITag)) {
				rel, _ := filepath.Rel(target, filepath.Dir(path))
				found[filepath.ToSlash(filepath.Join("vendor", "k8s.io", name, rel))] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(found))
	for d := range found {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, nil
}

// CheckControlPlaneVersion runs a built command and checks that it reports
// the stamped version and the official commit: kubectl through `version
// --client -o json`, the others through `--version=raw` (the full
// version.Info; plain --version prints only the version).
func CheckControlPlaneVersion(ctx context.Context, bin, name, wantVersion, wantCommit string) error {
	args := []string{"--version=raw"}
	if name == "kubectl" {
		args = []string{"version", "--client", "-o", "json"}
	}
	out, err := execx.Run(ctx, execx.Cmd{Name: bin, Args: args, Timeout: 30 * time.Second})
	if err != nil {
		return fmt.Errorf("%s does not run: %w", name, err)
	}
	gotVersion, gotCommit, err := ParseVersionOutput(name, out)
	if err != nil {
		return fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
	}
	if gotVersion != wantVersion || gotCommit != wantCommit {
		return fmt.Errorf("%s reports version %q commit %q, want %q commit %q", name, gotVersion, gotCommit, wantVersion, wantCommit)
	}
	return nil
}

var (
	rawVersion = regexp.MustCompile(`GitVersion:"([^"]*)"`)
	rawCommit  = regexp.MustCompile(`GitCommit:"([^"]*)"`)
)

// ParseVersionOutput reads the version and commit from a command's
// version output (kubectl's JSON, or a Go-syntax version.Info).
func ParseVersionOutput(name string, out []byte) (version, commit string, err error) {
	if name == "kubectl" {
		var v struct {
			ClientVersion *struct {
				GitVersion string `json:"gitVersion"`
				GitCommit  string `json:"gitCommit"`
			} `json:"clientVersion"`
		}
		if err := json.Unmarshal(out, &v); err != nil || v.ClientVersion == nil {
			return "", "", fmt.Errorf("no clientVersion in %q", firstLines(out))
		}
		return v.ClientVersion.GitVersion, v.ClientVersion.GitCommit, nil
	}
	mv, mc := rawVersion.FindSubmatch(out), rawCommit.FindSubmatch(out)
	if mv == nil || mc == nil {
		return "", "", fmt.Errorf("no GitVersion and GitCommit in %q", firstLines(out))
	}
	return string(mv[1]), string(mc[1]), nil
}

func firstLines(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
