package checksums

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestInputsRecordRoundTrip(t *testing.T) {
	rec := InputRecord{
		"1.9.11/patched":       {{"source", "h1:abc="}, {"lock", "sha256:01"}, {"series.1.k19-build", "sha256:02"}},
		"1.9.11/control-plane": {{"source", "h1:abc="}, {"driver", "sha256:03"}},
	}
	path := filepath.Join(t.TempDir(), InputsFileName)
	if err := os.WriteFile(path, rec.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadInputs(path)
	if err != nil {
		t.Fatal(err)
	}
	for k, in := range rec {
		if !got[k].Equal(in) {
			t.Errorf("%s: read %v, wrote %v", k, got[k], in)
		}
	}
	if len(got) != len(rec) {
		t.Errorf("read %d targets, wrote %d", len(got), len(rec))
	}
	if err := os.WriteFile(path, []byte("1.9.11/patched  source\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadInputs(path); err == nil {
		t.Error("a line without its digest was read")
	}
	if rec, err := LoadInputs(filepath.Join(t.TempDir(), "none")); err != nil || len(rec) != 0 {
		t.Errorf("a missing record: %v, %v; want an empty one", rec, err)
	}
}

func TestInputsDiffer(t *testing.T) {
	rec := Inputs{{"source", "h1:a"}, {"lock", "sha256:1"}, {"series.1.x", "sha256:2"}, {"driver", "sha256:3"}}
	now := Inputs{{"source", "h1:a"}, {"lock", "sha256:9"}, {"series.1.y", "sha256:2"}, {"driver", "sha256:3"}}
	want := []string{"lock", "series.1.y (new)", "series.1.x (gone)"}
	if got := now.Differ(rec); !slices.Equal(got, want) {
		t.Errorf("Differ = %q, want %q", got, want)
	}
	if got := rec.Differ(rec); len(got) != 0 {
		t.Errorf("the same inputs differ: %q", got)
	}
	if got := rec.Differ(nil); len(got) != len(rec) {
		t.Errorf("against no record: %q, want every input new", got)
	}
}
