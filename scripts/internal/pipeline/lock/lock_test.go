package lock

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/pipeline/godeps"
	"kubelet-toolchain/scripts/internal/pipeline/gomod"
)

const sumA = "h1:PFbmFeh46oRlAFz2MvCEbTA3ur8GKTi+08ur4xtJB10="

var repos = []godeps.Repo{
	{Root: "github.com/a/exact", Rev: "1111111111112222222222222222222222222222", Packages: []string{"."}},
	{Root: "github.com/b/tagged", Rev: "3333333333333333333333333333333333333333", Comment: "v1.2.0", Packages: []string{"sub"}},
	{Root: "github.com/c/substituted", Rev: "4444444444444444444444444444444444444444", Comment: "v0.8.9-17-g4444444", Packages: []string{"."}},
	{Root: "github.com/d/gone", Rev: "5555555555555555555555555555555555555555", Packages: []string{"."}},
}

var seed = []Candidate{
	{Root: "github.com/a/exact", Rev: repos[0].Rev, Module: "github.com/a/exact", Version: "v0.0.0-20170101000000-111111111111", How: "harvest"},
	{Root: "github.com/c/substituted", Rev: repos[2].Rev, Module: "github.com/c/substituted", Version: "v0.8.10", How: "override"},
	{Root: "github.com/d/gone", Rev: repos[3].Rev, How: "missing"},
}

// proxy answers like the module proxy: it serves only what it knows.
func proxy(served ...string) Downloader {
	return func(_ context.Context, ids ...string) ([]gomod.Module, error) {
		var out []gomod.Module
		for _, id := range ids {
			path, version, _ := strings.Cut(id, "@")
			m := gomod.Module{Path: path, Version: version, Error: "403 Forbidden: not available"}
			for _, s := range served {
				if s == id {
					m.Error, m.Sum = "", sumA
				}
			}
			out = append(out, m)
		}
		return out, nil
	}
}

func TestResolve(t *testing.T) {
	dl := proxy("github.com/a/exact@v0.0.0-20170101000000-111111111111", "github.com/b/tagged@v1.2.0", "github.com/c/substituted@v0.8.10")
	l, err := Resolve(context.Background(), "1.9.11", repos, nil, nil, seed, dl)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Module{}
	for _, m := range l.Modules {
		got[m.Root] = m
	}
	if m := got["github.com/a/exact"]; m.Substitution != "" || !m.Exact() {
		t.Errorf("pseudo-version of the Godeps revision should be exact: %+v", m)
	}
	if m := got["github.com/b/tagged"]; m.Version != "v1.2.0" || m.Substitution != "" {
		t.Errorf("the tag the Godeps comment names should be exact: %+v", m)
	}
	if m := got["github.com/c/substituted"]; m.Substitution == "" || m.Exact() {
		t.Errorf("a nearby version must be a substitution with a reason: %+v", m)
	}
	if len(l.Missing) != 1 || l.Missing[0].Root != "github.com/d/gone" || l.Missing[0].Reason == "" {
		t.Errorf("missing: %+v", l.Missing)
	}
	if err := l.CheckCovers(repos); err != nil {
		t.Errorf("a fresh lock does not cover its own repos: %v", err)
	}

	// Regenerating from the lock alone (what `make lock --check` does) is stable.
	again, err := Resolve(context.Background(), "1.9.11", repos, l, nil, nil, dl)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := l.Marshal()
	b, _ := again.Marshal()
	if string(a) != string(b) {
		t.Errorf("regenerating from the lock changed it:\n%s\n---\n%s", a, b)
	}
}

func TestResolveReportsUnservedRoots(t *testing.T) {
	_, err := Resolve(context.Background(), "1.9.11", repos, nil, nil, seed, proxy())
	if err == nil {
		t.Fatal("resolved with nothing served")
	}
	for _, w := range []string{"github.com/a/exact@111111111111", "403"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
}

func TestCheckCoversDetectsDrift(t *testing.T) {
	dl := proxy("github.com/a/exact@v0.0.0-20170101000000-111111111111", "github.com/b/tagged@v1.2.0", "github.com/c/substituted@v0.8.10")
	l, err := Resolve(context.Background(), "1.9.11", repos, nil, nil, seed, dl)
	if err != nil {
		t.Fatal(err)
	}
	moved := append([]godeps.Repo(nil), repos...)
	moved[1].Rev = "9999999999999999999999999999999999999999"
	moved = append(moved, godeps.Repo{Root: "github.com/e/new", Rev: "77777777777777777777"})
	err = l.CheckCovers(moved[1:])
	if err == nil {
		t.Fatal("drift not detected")
	}
	for _, w := range []string{"github.com/b/tagged: Godeps.json has 999999999999", "github.com/e/new@777777777777 is not in the lock", "github.com/a/exact is locked but not in Godeps.json"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

func TestValidateRejectsTampering(t *testing.T) {
	base := func() *Lock {
		return &Lock{Release: "1.9.11", Era: "godeps", Modules: []Module{{
			Root: "github.com/c/substituted", Rev: repos[2].Rev, Module: "github.com/c/substituted",
			Version: "v0.8.10", Sum: sumA, Packages: []string{"."}, Substitution: "nearest served version",
		}}}
	}
	if err := base().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, tamper := range map[string]func(*Lock){
		"sum not h1":               func(l *Lock) { l.Modules[0].Sum = "h2:abc" },
		"sum truncated":            func(l *Lock) { l.Modules[0].Sum = sumA[:20] },
		"reason removed":           func(l *Lock) { l.Modules[0].Substitution = "" },
		"bad version":              func(l *Lock) { l.Modules[0].Version = "latest" },
		"nothing to copy":          func(l *Lock) { l.Modules[0].Packages = nil },
		"root twice":               func(l *Lock) { l.Modules = append(l.Modules, l.Modules[0]) },
		"missing without a reason": func(l *Lock) { l.Missing = []Missing{{Root: "x.org/y", Rev: "1"}} },
		"unknown era":              func(l *Lock) { l.Era = "bazel" },
	} {
		l := base()
		tamper(l)
		if err := l.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The committed locks load, validate, and pin each root once.
func TestRepositoryLocks(t *testing.T) {
	for _, r := range []string{"1.7.5", "1.9.11", "1.18.6"} {
		l, err := Load(filepath.Join("..", "..", "..", "..", "locks", r+".yaml"))
		if err != nil {
			t.Error(err)
			continue
		}
		if l.Release != r {
			t.Errorf("locks/%s.yaml says release %s", r, l.Release)
		}
	}
}

// A seed's override replaces a served exact pin of the committed lock and
// keeps its own reason; regenerating without the seed keeps the override.
func TestSeedOverridesLock(t *testing.T) {
	dl := proxy("github.com/a/exact@v0.0.0-20170101000000-111111111111", "github.com/a/exact@v1.0.2",
		"github.com/b/tagged@v1.2.0", "github.com/c/substituted@v0.8.10")
	l, err := Resolve(context.Background(), "1.9.11", repos, nil, nil, seed, dl)
	if err != nil {
		t.Fatal(err)
	}
	const why = "the pinned revision crashes under Go 1.26"
	bump := []Candidate{{Root: "github.com/a/exact", Rev: repos[0].Rev, Module: "github.com/a/exact", Version: "v1.0.2", How: "override", Substitution: why}}
	next, err := Resolve(context.Background(), "1.9.11", repos, l, nil, bump, dl)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Resolve(context.Background(), "1.9.11", repos, next, nil, nil, dl)
	if err != nil {
		t.Fatal(err)
	}
	for name, lk := range map[string]*Lock{"with the seed": next, "regenerated from the lock": again} {
		for _, m := range lk.Modules {
			if m.Root == "github.com/a/exact" && (m.Version != "v1.0.2" || m.Substitution != why) {
				t.Errorf("%s: %+v, want v1.0.2 with the seed's reason", name, m)
			}
		}
	}
}

// A new release's lock takes the pins the other releases' locks hold for
// the same revision (with their substitution reasons), and their missing
// roots; a different revision of the same root is not taken.
func TestResolveFromSiblingLocks(t *testing.T) {
	dl := proxy("github.com/a/exact@v0.0.0-20170101000000-111111111111", "github.com/b/tagged@v1.2.0", "github.com/c/substituted@v0.8.10")
	sibling, err := Resolve(context.Background(), "1.9.11", repos, nil, nil, seed, dl)
	if err != nil {
		t.Fatal(err)
	}
	// The new release pins c at another revision: nothing may stand in for it.
	next := append([]godeps.Repo{}, repos...)
	next[2].Rev = "6666666666666666666666666666666666666666"
	if _, err := Resolve(context.Background(), "1.8.15", next, nil, []*Lock{sibling}, nil, dl); err == nil || !strings.Contains(err.Error(), "github.com/c/substituted@666666666666") {
		t.Fatalf("a sibling's pin of another revision was taken (err %v)", err)
	}
	l, err := Resolve(context.Background(), "1.8.15", repos, nil, []*Lock{sibling}, nil, dl)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := sibling.Marshal()
	b, _ := l.Marshal()
	if strings.Replace(string(a), "1.9.11", "1.8.15", -1) != string(b) {
		t.Errorf("the same revisions resolved differently from the sibling lock:\n%s\n---\n%s", a, b)
	}
}

// What the committed lock decided stays: a root it records as missing is
// not pinned from a sibling that serves it.
func TestSiblingsDoNotOverrideTheCommittedLock(t *testing.T) {
	dl := proxy("github.com/a/exact@v0.0.0-20170101000000-111111111111", "github.com/b/tagged@v1.2.0", "github.com/c/substituted@v0.8.10")
	withC, err := Resolve(context.Background(), "1.9.11", repos, nil, nil, seed, dl)
	if err != nil {
		t.Fatal(err)
	}
	missingC := append([]Candidate{}, seed...)
	missingC[1] = Candidate{Root: "github.com/c/substituted", Rev: repos[2].Rev, How: "missing"}
	committed, err := Resolve(context.Background(), "1.7.5", repos, nil, nil, missingC, dl)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Resolve(context.Background(), "1.7.5", repos, committed, []*Lock{withC}, nil, dl)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := committed.Marshal()
	b, _ := again.Marshal()
	if string(a) != string(b) {
		t.Errorf("a sibling changed the committed lock:\n%s\n---\n%s", a, b)
	}
}

// The staging repositories of a modules-era lock are the k8s.io modules
// at its staging version: 1.18.6's own lock names api and client-go, and
// neither a non-staging k8s.io module nor a go.mod line.
func TestStagingModules(t *testing.T) {
	l, err := Load("../../../../locks/1.18.6.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := l.StagingModules()
	for _, want := range []string{"api", "client-go", "kubectl", "kube-proxy"} {
		if !slices.Contains(got, want) {
			t.Errorf("staging modules %v lack %s", got, want)
		}
	}
	for _, not := range []string{"klog", "utils", "kube-openapi"} {
		if slices.Contains(got, not) {
			t.Errorf("staging modules %v include %s, not a staging repository", got, not)
		}
	}
	if len(got) != len(slices.Compact(slices.Sorted(slices.Values(got)))) {
		t.Errorf("duplicates in %v", got)
	}
}

// 1.22.17's kube-controller-manager is not served at v0.22.17: its
// stand-in (v0.22.16, a replace in the lock) is still a staging
// repository, whose config types kube-apiserver's OpenAPI covers.
func TestStagingModulesStandIn(t *testing.T) {
	l, err := Load("../../../../locks/1.22.17.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := l.StagingModules()
	if !slices.Contains(got, "kube-controller-manager") {
		t.Errorf("staging modules %v lack kube-controller-manager (its stand-in)", got)
	}
	if slices.Contains(got, "reflect2") || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "/") }) {
		t.Errorf("staging modules %v include a non-staging replacement", got)
	}
}
