package conformance

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
)

func results(outcomes map[string]string) []Result {
	var out []Result
	for name, o := range outcomes {
		out = append(out, Result{Name: name, Outcome: o, Message: "why " + name})
	}
	return out
}

func all(string) bool { return true }

// A spec that differs is judged by how often it passed on each variant
// over the full run and the retries, not by the full run alone.
func TestCompare(t *testing.T) {
	e := &Expected{KnownFailures: []Entry{
		{Spec: "both-known", Reason: "found: engine"},
		{Spec: "stale-known", Reason: "was failing"},
	}}
	full := Attempt{
		Patched: results(map[string]string{"ok": "passed", "broken": "failed", "flaky": "failed", "vanilla-bug": "passed",
			"both-known": "failed", "both-new": "failed", "stale-known": "passed", "skip": "skipped"}),
		Vanilla: results(map[string]string{"ok": "passed", "broken": "passed", "flaky": "passed", "vanilla-bug": "failed",
			"both-known": "failed", "both-new": "failed", "stale-known": "passed", "skip": "skipped"}),
	}
	if got, want := Differing(full, all), []string{"broken", "flaky", "vanilla-bug"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Differing = %v, want %v", got, want)
	}
	// Retries run only the differing specs; the others are skipped there.
	retry := func(p, v map[string]string) Attempt {
		p["ok"], v["ok"] = "skipped", "skipped"
		return Attempt{Patched: results(p), Vanilla: results(v)}
	}
	attempts := []Attempt{full,
		retry(map[string]string{"broken": "failed", "flaky": "passed", "vanilla-bug": "passed"},
			map[string]string{"broken": "passed", "flaky": "failed", "vanilla-bug": "failed"}),
		retry(map[string]string{"broken": "passed", "flaky": "passed", "vanilla-bug": "passed"},
			map[string]string{"broken": "passed", "flaky": "passed", "vanilla-bug": "failed"}),
		retry(map[string]string{"broken": "failed", "flaky": "passed", "vanilla-bug": "passed"},
			map[string]string{"broken": "passed", "flaky": "passed", "vanilla-bug": "failed"}),
	}
	c := Compare("e2e_node 1.9.11", "1.9.11", 7, attempts, all, e)
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("patched", c.Patched, Counts{Passed: 3, Failed: 4})
	check("vanilla", c.Vanilla, Counts{Passed: 4, Failed: 3})
	check("onlyFailOnPatched", c.OnlyFailOnPatched, []string{"broken"})
	check("onlyFailOnVanilla", c.OnlyFailOnVanilla, []string{"vanilla-bug"})
	check("flaky", c.Flaky, []string{"flaky"})
	check("retried", c.Retried, []Retried{
		{Spec: "broken", Runs: 4, PatchedPasses: 1, VanillaPasses: 4},
		{Spec: "flaky", Runs: 4, PatchedPasses: 3, VanillaPasses: 3},
		{Spec: "vanilla-bug", Runs: 4, PatchedPasses: 4, VanillaPasses: 0},
	})
	check("unexplained", c.Unexplained, []string{"both-new"})
	check("knownButPassed", c.KnownButPassed, []string{"stale-known"})
	for _, f := range c.CommonFailures {
		if f.Name == "both-known" && (!f.KnownFailure || f.Reason != "found: engine") {
			t.Errorf("both-known = %+v, want known with the file's reason", f)
		}
	}
}

// A known failure that passes on vanilla is no excuse: it is
// onlyFailOnPatched, whatever the file says.
func TestKnownFailureMustFailOnVanilla(t *testing.T) {
	e := &Expected{KnownFailures: []Entry{{Spec: "x", Reason: "r"}}}
	a := Attempt{Patched: results(map[string]string{"x": "failed"}), Vanilla: results(map[string]string{"x": "passed"})}
	c := Compare("s", "k", 1, []Attempt{a, a, a, a}, all, e)
	if !reflect.DeepEqual(c.OnlyFailOnPatched, []string{"x"}) || len(c.CommonFailures) != 0 {
		t.Fatalf("onlyFailOnPatched %v, commonFailures %v", c.OnlyFailOnPatched, c.CommonFailures)
	}
}

func TestLoadExpected(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "1.9.11"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, "1.9.11", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("not-judged.yaml", "notJudged:\n- spec: 'a [x] (b)  [Conformance]'\n  reason: no registry\n")
	write("kubelet-1.7.5.yaml", "knownFailures:\n- spec: k\n  reason: found\n")
	e, err := LoadExpected(dir, "1.9.11", "1.7.5")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.KnownFailure("k"); !ok || len(e.NotJudged) != 1 || len(e.Files) != 2 {
		t.Fatalf("loaded %+v", e)
	}
	// The skip pattern matches the spec's full text exactly, metacharacters
	// and double spaces included, and nothing longer.
	re := regexp.MustCompile(e.SkipPattern())
	if !re.MatchString("E2eNode Suite a [x] (b)  [Conformance]") || re.MatchString("a [x] (b) [Conformance]") ||
		re.MatchString("a [x] (b)  [Conformance] more") {
		t.Fatalf("skip pattern %q", e.SkipPattern())
	}
	if stale := e.Stale(results(map[string]string{"k": "failed"})); !reflect.DeepEqual(stale, []string{"a [x] (b)  [Conformance]"}) {
		t.Fatalf("stale = %v", stale)
	}
	// No file for a kubelet release: nothing known, not an error.
	if e, err := LoadExpected(dir, "1.9.11", "1.9.11"); err != nil || len(e.KnownFailures) != 0 {
		t.Fatalf("%+v %v", e, err)
	}
	write("kubelet-1.9.11.yaml", "knownFailures:\n- spec: k\n")
	if _, err := LoadExpected(dir, "1.9.11", "1.9.11"); err == nil {
		t.Fatal("an entry without a reason was accepted")
	}
	write("kubelet-1.9.11.yaml", "knownFailure:\n- spec: k\n  reason: r\n")
	if _, err := LoadExpected(dir, "1.9.11", "1.9.11"); err == nil {
		t.Fatal("a misspelt key was accepted")
	}
}

// The committed files load, and every spec they name is one of the suite's.
func TestCommittedExpectations(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("expected", "*"))
	if len(dirs) == 0 {
		t.Fatal("no expected/<suite> directory")
	}
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "kubelet-*.yaml"))
		kubelets := []string{"none"}
		for _, f := range files {
			b := filepath.Base(f)
			kubelets = append(kubelets, b[len("kubelet-"):len(b)-len(".yaml")])
		}
		for _, k := range kubelets {
			if _, err := LoadExpected("expected", filepath.Base(d), k); err != nil {
				t.Error(err)
			}
		}
	}
}
