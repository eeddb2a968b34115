package podhash

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func res(pod, c string, hash uint64, uid string, derived bool, accepted *bool) Result {
	return Result{Pod: pod, Container: c, Hash: hash, UID: uid, UIDDerived: derived, Accepted: accepted}
}

func ptr(b bool) *bool { return &b }

func TestPreflightVerdicts(t *testing.T) {
	from := []Result{
		res("ns/api", "app", 1, "u1", false, nil),
		res("ns/static", "web", 2, "old-uid", true, nil),
	}
	vanilla := []Result{
		res("ns/api", "app", 10, "u1", false, ptr(false)),
		res("ns/static", "web", 20, "new-uid", true, ptr(false)),
	}
	patched := []Result{
		res("ns/api", "app", 1, "u1", false, ptr(true)),
		res("ns/static", "web", 2, "new-uid", true, ptr(true)),
	}
	rep, err := Preflight("1.7.5", "1.9.11", from, vanilla, patched)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Rows[0]; got.VanillaVerdict != recreated || got.PatchedVerdict != kept {
		t.Errorf("api pod: %+v", got)
	}
	// Hash accepted, but the static pod UID changes: the pod is replaced.
	if got := rep.Rows[1]; !strings.HasPrefix(got.PatchedVerdict, recreated) {
		t.Errorf("static pod with a new UID: %+v", got)
	}
	if rep.Recreating != 1 || len(rep.UIDs) != 1 || !rep.UIDs[0].PodReplaced {
		t.Errorf("report: %+v", rep)
	}
	var table strings.Builder
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "whole pod is replaced") {
		t.Errorf("table does not say the pod is replaced:\n%s", table.String())
	}
	if _, err := Preflight("a", "b", from, vanilla[:1], patched); err == nil {
		t.Error("mismatched results accepted")
	}
}

func TestCorpus(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	n, err := Corpus(a, 300, 1, "", true)
	if err != nil || n < 300 {
		t.Fatalf("corpus of %d: %v", n, err)
	}
	if _, err := Corpus(b, 300, 1, "-new", true); err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if string(da) == string(db) || strings.ReplaceAll(string(db), "-new", "") != string(da) {
		t.Error("the second corpus must differ from the first in images only")
	}
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(da, &list); err != nil || list.Kind != "List" || len(list.Items) == 0 {
		t.Fatalf("not a List: %v", err)
	}
	for _, field := range []string{"allowPrivilegeEscalation", "mountPropagation", "initContainers", "valueFrom", "subPath"} {
		if !strings.Contains(string(da), field) {
			t.Errorf("corpus never sets %s", field)
		}
	}
	c, _ := Corpus(filepath.Join(dir, "c.json"), 300, 1, "", false)
	dc, _ := os.ReadFile(filepath.Join(dir, "c.json"))
	if c < 300 || strings.Contains(string(dc), "mountPropagation") {
		t.Error("a corpus without alpha gates still sets mountPropagation")
	}
}
