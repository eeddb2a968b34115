package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/lock"
	"kubelet-toolchain/tools/execx"
)

// ControlPlaneCommand is one binary of the control plane and the package
// it is built from (relative to k8s.io/kubernetes).
type ControlPlaneCommand struct {
	Name, Package string
}

// ControlPlaneCommands are r's control plane binaries, in build order.
// kube-proxy is here because it is built the same way (static, from the
// same tree); the rehearsal's nodes run it so that Services work. The
// scheduler lived under plugin/ until 1.10.
func ControlPlaneCommands(r *matrix.Release) []ControlPlaneCommand {
	scheduler := "cmd/kube-scheduler"
	if _, minor := r.MajorMinor(); minor == "7" || minor == "8" || minor == "9" {
		scheduler = "plugin/cmd/kube-scheduler"
	}
	return []ControlPlaneCommand{
		{"kube-apiserver", "cmd/kube-apiserver"},
		{"kube-controller-manager", "cmd/kube-controller-manager"},
		{"kube-scheduler", scheduler},
		{"kubectl", "cmd/kubectl"},
		{"kube-proxy", "cmd/kube-proxy"},
	}
}

// ControlPlaneTargetName is the control plane's directory under
// _output/<release>/ and its name in progress lines.
const ControlPlaneTargetName = "control-plane"

// ControlPlanePathsFor returns the control plane's layout under an output
// dir: every binary in _output/<release>/control-plane/bin/.
func ControlPlanePathsFor(output, release string) Paths {
	return targetPaths(output, release, ControlPlaneTargetName, "bin")
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
	return nil
}

// ControlPlaneTarget is the release's control plane: its vanilla tree plus
// the control-plane series, with the OpenAPI definitions generated, each
// command static (CGO_ENABLED=0, as upstream builds these commands:
// hack/lib/golang.sh KUBE_STATIC_LIBRARIES, so they run in any node image)
// and stamped with the control plane's version, which each binary must
// report.
func ControlPlaneTarget(ctx context.Context, o Options) *Target {
	o = o.withDefaults()
	r := o.Release
	p := ControlPlanePathsFor(o.OutputDir, r.Release)
	args, env := compileCommand(r, versionVars(r, r.ControlPlaneGitVersion()), nil, false, p)
	t := &Target{
		Name:     ControlPlaneTargetName,
		Series:   r.Series.ForControlPlane(),
		Generate: []Step{godebugStep(ControlPlaneCommands(r)), openAPIStep(ctx, o)},
		Paths:    p,
		SumsFile: "SHA256SUMS",
	}
	for _, c := range ControlPlaneCommands(r) {
		name := c.Name
		t.Outputs = append(t.Outputs, Output{Name: name, GoArgs: args, Package: goPackage(r, c.Package), Dir: goDir(r, p), Env: env,
			Check: func(ctx context.Context, bin string) error {
				return CheckReportedVersion(ctx, bin, name, r.ControlPlaneGitVersion(), r.GitCommit)
			}})
	}
	return t
}

// ControlPlane builds the release's control-plane binaries.
func ControlPlane(ctx context.Context, o Options) (*Result, error) {
	if err := ControlPlaneSupported(o.Matrix, o.Release); err != nil {
		return nil, err
	}
	return Run(ctx, o, ControlPlaneTarget(ctx, o))
}

// openAPIStep generates the OpenAPI definitions kube-apiserver compiles in.
func openAPIStep(ctx context.Context, o Options) Step {
	return Step{"generate-openapi", func(tree string) error {
		var staging []string
		if o.Release.Era == matrix.EraModules {
			l, err := lock.Load(filepath.Join(o.Matrix.Root, o.Release.Lock()))
			if err != nil {
				return err
			}
			staging = l.StagingModules()
		}
		return generateOpenAPI(ctx, o.Release, filepath.Dir(filepath.Dir(filepath.Dir(tree))), staging, o.Log)
	}}
}

// godebugStep gives every command the kubelet's GODEBUG defaults file.
func godebugStep(cmds []ControlPlaneCommand) Step {
	return Step{"generate-godebug", func(tree string) error { return spreadGODEBUG(tree, cmds) }}
}

// godebugFile is the defaults series' file in cmd/kubelet. //go:debug lines
// count only in the main package, so each command needs its own copy.
const godebugFile = "cmd/kubelet/zz_godebug.go"

func spreadGODEBUG(tree string, cmds []ControlPlaneCommand) error {
	data, err := os.ReadFile(filepath.Join(tree, godebugFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no defaults series: CheckGODEBUG refuses the binaries
	} else if err != nil {
		return err
	}
	for _, c := range cmds {
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
//
// In the modules era the generator still runs in GOPATH mode, as
// upstream's hack/run-in-gopath.sh ran it, over the vendored tree; staging
// names the staging repositories there (the zip carries no staging/: they
// are vendored from their published copies).
func generateOpenAPI(ctx context.Context, r *matrix.Release, gopath string, staging []string, log io.Writer) error {
	tree := treeFrom(gopath)
	scratch, err := os.MkdirTemp("", "openapi-gen-")
	if err != nil {
		return err
	}
	defer fsutil.RemoveAll(scratch)
	// openapi-gen moved from code-generator to kube-openapi (1.10), and
	// from 1.12 reports API rule violations, which upstream's build
	// compares with the tree's known list.
	genPkg := "vendor/k8s.io/kube-openapi/cmd/openapi-gen"
	if _, err := os.Stat(filepath.Join(tree, genPkg)); err != nil {
		genPkg = "vendor/k8s.io/code-generator/cmd/openapi-gen"
	}
	gen, env, err := buildTreeTool(ctx, r, gopath, "k8s.io/kubernetes/"+genPkg, scratch)
	if err != nil {
		return err
	}
	dirs, err := OpenAPIDirs(tree, staging)
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
	args := []string{"-i", strings.Join(pkgs, ","), "-p", openAPIPackage,
		"-O", "zz_generated.openapi", "-h", headerFile, "-o", filepath.Join(gopath, "src")}
	known, err := os.ReadFile(filepath.Join(tree, knownViolations))
	report := filepath.Join(scratch, "violations.report")
	if err == nil {
		args = append(args, "-r", report)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, err := execx.Run(ctx, execx.Cmd{Name: gen, Args: args, Dir: tree, Env: env}); err != nil {
		return fmt.Errorf("openapi-gen: %w", err)
	}
	if known != nil {
		got, err := os.ReadFile(report)
		if err != nil {
			return fmt.Errorf("openapi-gen wrote no API rule report: %w", err)
		}
		if !bytes.Equal(got, known) {
			return fmt.Errorf("openapi-gen: the API rule violations differ from the tree's %s (upstream's build fails the same way): %s", knownViolations, firstDifference(known, got))
		}
	}
	fi, err := os.Stat(out)
	if err != nil {
		return fmt.Errorf("openapi-gen wrote no %s: %w", out, err)
	}
	fmt.Fprintf(log, "    generated pkg/generated/openapi/zz_generated.openapi.go from %d packages (%d kB)\n", len(pkgs), fi.Size()/1000)
	return nil
}

// firstDifference names the first line where got differs from want.
func firstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d: want %q, got %q (%d lines against %d)", i+1, wl, gl, len(w), len(g))
		}
	}
	return "no line differs"
}

// knownViolations is the tree's list of API rule violations openapi-gen
// reports (1.12 and later).
const knownViolations = "api/api-rules/violation_exceptions.list"

// buildTreeTool builds a generator the tree vendors (openapi-gen,
// go-bindata) into dir, as upstream's build does, and returns it with the
// GOPATH environment to run it in.
func buildTreeTool(ctx context.Context, r *matrix.Release, gopath, pkg, dir string) (string, []string, error) {
	env := []string{"GOTOOLCHAIN=" + r.Go, "GO111MODULE=off", "GOFLAGS=", "GOWORK=off", "CGO_ENABLED=0", "GOPATH=" + gopath}
	bin := filepath.Join(dir, filepath.Base(pkg))
	if _, err := execx.Run(ctx, execx.Cmd{Name: "go", Args: []string{"build", "-o", bin, pkg}, Dir: gopath, Env: env}); err != nil {
		return "", nil, fmt.Errorf("building %s: %w", filepath.Base(pkg), err)
	}
	return bin, env, nil
}

// openAPIRoots are the staging repositories upstream's generators search
// besides the tree itself (hack/make-rules/helpers/cache_go_dirs.sh, read
// from the tree): through 1.10 or so the ./vendor/k8s.io/<name> roots its
// find names, staging/ pruned; later every staging repository (its find
// walks staging/ and names each file by its vendor/ path).
func openAPIRoots(tree string, staging []string) ([]string, error) {
	if staging != nil {
		return staging, nil
	}
	script, err := os.ReadFile(filepath.Join(tree, "hack/make-rules/helpers/cache_go_dirs.sh"))
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(script), "-path ./staging") {
		var names []string
		for _, m := range vendorRoot.FindAllStringSubmatch(string(script), -1) {
			names = append(names, m[1])
		}
		return names, nil
	}
	entries, err := os.ReadDir(filepath.Join(tree, "staging/src/k8s.io"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

var vendorRoot = regexp.MustCompile(`\./vendor/k8s\.io/([A-Za-z0-9_.-]+)`)

var (
	k8sTag     = regexp.MustCompile(`(?m)^// *\+k8s:`)
	openAPITag = []byte("+k8s:openapi-gen=")
)

// OpenAPIDirs lists, sorted and relative to the tree, the directories with
// a Go file that has a `// +k8s:` tag line and mentions +k8s:openapi-gen=,
// as the generated-files Makefile selects them.
func OpenAPIDirs(tree string, staging []string) ([]string, error) {
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
	roots, err := openAPIRoots(tree, staging)
	if err != nil {
		return nil, err
	}
	for _, name := range roots {
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
	excluded, err := openAPIExcluded(tree)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(found))
	for d := range found {
		if !slices.ContainsFunc(excluded, func(prefix string) bool { return strings.HasPrefix(d+"/", prefix) }) {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out, nil
}

// kubeOpenAPIFilter is the generated-files Makefile's line (1.14 and
// later) that leaves other API servers' packages (code-generator's
// examples, sample-apiserver) out of kube-apiserver's definitions.
var kubeOpenAPIFilter = regexp.MustCompile(`(?m)^KUBE_OPENAPI_TAG_FILES\s*:=\s*\$\(filter-out ([^,]+),`)

// openAPIExcluded returns the directory prefixes (with a trailing /) the
// tree's Makefile filters out of kube-apiserver's OpenAPI packages.
func openAPIExcluded(tree string) ([]string, error) {
	mk, err := os.ReadFile(filepath.Join(tree, "build/root/Makefile.generated_files"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	m := kubeOpenAPIFilter.FindSubmatch(mk)
	if m == nil {
		return nil, nil
	}
	var out []string
	for _, pat := range strings.Fields(string(m[1])) {
		out = append(out, strings.TrimSuffix(pat, "%"))
	}
	return out, nil
}

// CheckReportedVersion runs a built command (the kubelet or a control-plane
// command) and checks that it reports the stamped version and the official
// commit: kubectl through `version
// --client -o json`, the others through `--version=raw` (the full
// version.Info; plain --version prints only the version).
func CheckReportedVersion(ctx context.Context, bin, name, wantVersion, wantCommit string) error {
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
