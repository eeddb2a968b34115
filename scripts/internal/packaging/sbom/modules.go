package sbom

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/build"
	"kubelet-toolchain/scripts/internal/pipeline/lock"
	"kubelet-toolchain/tools/execx"
)

// KubernetesModule is the main module every kubelet is built from.
const KubernetesModule = "k8s.io/kubernetes"

// Module is one dependency module compiled into the binary.
type Module struct {
	// Path and Version name the module whose code is compiled in.
	Path    string
	Version string
	// Sum is its h1: hash (from the lock or the tree's go.sum).
	Sum string
	// Roots are the import path prefixes vendor/ holds this module's code
	// under: Godeps repository roots, or the required module path (which a
	// replacement keeps).
	Roots []string
	// Notes say where the version comes from: the Godeps revision, a
	// substitution or replacement with its reason.
	Notes []string
	// Substituted is set when this build's lock, not upstream, chose the
	// version (a Godeps substitution or extra module, a go.mod edit).
	Substituted bool
}

// ID is path@version.
func (m Module) ID() string { return m.Path + "@" + m.Version }

// Modules lists the dependency modules compiled into the built kubelet of
// r+v: for a modules-era build from the binary's own build info (sums from
// the tree's go.sum); for a GOPATH-era build, whose binary carries no module
// information, from the lock, keeping only the modules whose packages
// `go list -deps` of cmd/kubelet reaches.
func Modules(ctx context.Context, r *matrix.Release, v matrix.Variant, p build.Paths, l *lock.Lock) ([]Module, error) {
	if r.Era == matrix.EraModules {
		return modulesFromBuildInfo(r, p, l)
	}
	return modulesFromLock(ctx, r, v, p, l)
}

func modulesFromBuildInfo(r *matrix.Release, p build.Paths, l *lock.Lock) ([]Module, error) {
	bi, err := buildinfo.ReadFile(p.Binary)
	if err != nil {
		return nil, fmt.Errorf("reading build info of %s: %w", p.Binary, err)
	}
	if bi.Main.Path != KubernetesModule {
		return nil, fmt.Errorf("%s: main module is %q, not %s", p.Binary, bi.Main.Path, KubernetesModule)
	}
	sums, err := goSum(filepath.Join(p.Tree, "go.sum"))
	if err != nil {
		return nil, err
	}
	reasons := map[string]string{}
	if l.GoMod != nil {
		for _, rp := range l.GoMod.Replace {
			reasons[rp.Path] = rp.Reason
		}
	}
	var out []Module
	for _, d := range bi.Deps {
		m := Module{Path: d.Path, Version: d.Version, Roots: []string{d.Path}}
		if d.Replace != nil {
			if d.Replace.Version == "" {
				return nil, fmt.Errorf("%s: %s is replaced by the directory %s, which has no module version", p.Binary, d.Path, d.Replace.Path)
			}
			m.Path, m.Version = d.Replace.Path, d.Replace.Version
			if why, ok := reasons[d.Path]; ok {
				m.Substituted = true
				m.Notes = append(m.Notes, fmt.Sprintf("replaces the requirement %s@%s (this build's lock, goMod.replace): %s", d.Path, d.Version, oneLine(why)))
			} else if d.Replace.Path != d.Path || d.Replace.Version != d.Version {
				m.Notes = append(m.Notes, fmt.Sprintf("replaces the requirement %s@%s (kubernetes' own go.mod)", d.Path, d.Version))
			}
		}
		if fi, err := os.Stat(filepath.Join(p.Tree, "staging", "src", filepath.FromSlash(d.Path))); err == nil && fi.IsDir() && l.GoMod != nil {
			m.Notes = append(m.Notes, fmt.Sprintf("kubernetes' staging/src/%s, taken as the published module at %s (lock goMod.stagingVersion)", d.Path, l.GoMod.StagingVersion))
		}
		m.Sum = sums[m.Path+" "+m.Version]
		if m.Sum == "" {
			return nil, fmt.Errorf("%s: no go.sum line for %s in %s", p.Binary, m.ID(), p.Tree)
		}
		out = append(out, m)
	}
	return merge(out), nil
}

// goSum reads the h1: sums of module zips (not go.mod files) from a go.sum.
func goSum(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fl := strings.Fields(sc.Text()); len(fl) == 3 && !strings.HasSuffix(fl[1], "/go.mod") {
			sums[fl[0]+" "+fl[1]] = fl[2]
		}
	}
	return sums, sc.Err()
}

func modulesFromLock(ctx context.Context, r *matrix.Release, v matrix.Variant, p build.Paths, l *lock.Lock) ([]Module, error) {
	_, env := build.CompileCommand(r, v, p)
	if err := build.EnsureCToolchain(ctx, r, p, env, io.Discard); err != nil {
		return nil, err
	}
	out, err := execx.Run(ctx, execx.Cmd{
		Name: "go", Args: []string{"list", "-deps", "-tags", strings.Join(r.Tags, ","), "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", build.KubeletPackage(r)},
		Dir: build.BuildDir(r, p), Env: env,
	})
	if err != nil {
		return nil, fmt.Errorf("listing the packages compiled into kubelet: %w", err)
	}
	byRoot := map[string]lock.Module{}
	for _, m := range l.Modules {
		byRoot[m.Root] = m
	}
	used := map[string]bool{}
	var unknown []string
	const vendorPrefix = KubernetesModule + "/vendor/"
	for _, ip := range strings.Fields(string(out)) {
		vp, ok := strings.CutPrefix(ip, vendorPrefix)
		if !ok {
			continue // the kubernetes tree itself
		}
		if root := longestRoot(vp, byRoot); root != "" {
			used[root] = true
		} else if !isStaging(p.Tree, vp) {
			unknown = append(unknown, vp)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("kubelet compiles vendored packages no lock module restores (%s): %s", r.Lock(), strings.Join(unknown, ", "))
	}
	var mods []Module
	for root := range used {
		lm := byRoot[root]
		m := Module{Path: lm.Module, Version: lm.Version, Sum: lm.Sum, Roots: []string{root}}
		m.Substituted = !lm.Exact()
		switch {
		case lm.Extra:
			m.Notes = append(m.Notes, "not listed in Godeps.json: "+oneLine(lm.Substitution))
		case !lm.Exact():
			m.Notes = append(m.Notes, fmt.Sprintf("substituted for Godeps revision %s of %s: %s", lm.Rev, root, oneLine(lm.Substitution)))
		default:
			m.Notes = append(m.Notes, fmt.Sprintf("Godeps revision %s of %s", lm.Rev, root))
		}
		mods = append(mods, m)
	}
	return merge(mods), nil
}

// longestRoot finds the root among roots that import path ip is in.
func longestRoot[T any](ip string, roots map[string]T) string {
	for p := ip; p != "." && p != "/" && p != ""; p = filepath.ToSlash(filepath.Dir(p)) {
		if _, ok := roots[p]; ok {
			return p
		}
	}
	return ""
}

// isStaging reports whether vendored import path ip is one of the tree's
// own staging repositories (vendor/k8s.io/X links to staging/src/k8s.io/X).
func isStaging(tree, ip string) bool {
	parts := strings.SplitN(ip, "/", 3)
	if len(parts) < 2 {
		return false
	}
	fi, err := os.Stat(filepath.Join(tree, "staging", "src", parts[0], parts[1]))
	return err == nil && fi.IsDir()
}

// merge folds modules with the same path@version (several Godeps roots
// restored from one module) and sorts them.
func merge(mods []Module) []Module {
	by := map[string]*Module{}
	var ids []string
	for _, m := range mods {
		if old, ok := by[m.ID()]; ok {
			old.Roots = append(old.Roots, m.Roots...)
			old.Notes = append(old.Notes, m.Notes...)
			old.Substituted = old.Substituted || m.Substituted
			continue
		}
		mm := m
		by[m.ID()] = &mm
		ids = append(ids, m.ID())
	}
	sort.Strings(ids)
	out := make([]Module, 0, len(ids))
	for _, id := range ids {
		m := by[id]
		sort.Strings(m.Roots)
		sort.Strings(m.Notes)
		out = append(out, *m)
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ModuleOf names the module that owns tree path rel (slash-separated) of
// the tree at tree: the ID (path@version) of a dependency module for a
// vendored file, KubernetesModule for the tree's own files (staging
// repositories included), "" for a vendored file of a module that is not
// compiled in.
func ModuleOf(rel string, mods []Module, tree string) string {
	vp, ok := strings.CutPrefix(rel, "vendor/")
	if !ok {
		return KubernetesModule
	}
	roots := map[string]string{}
	for _, m := range mods {
		for _, r := range m.Roots {
			roots[r] = m.ID()
		}
	}
	if root := longestRoot(filepath.ToSlash(filepath.Dir(vp)), roots); root != "" {
		return roots[root]
	}
	if isStaging(tree, vp) {
		return KubernetesModule
	}
	return ""
}
