package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Judging a comparison again takes the focus, skip and seed its reports
// were run with, and refuses a different selection given on purpose.
func TestLoadLastTakesTheRunsSelection(t *testing.T) {
	dir := t.TempDir()
	data := `{"focus":"Pods should get a host IP","skip":"","seed":7,"wallTime":"26m53s"}`
	if err := os.WriteFile(filepath.Join(dir, "compare.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &harness{options: options{focus: defaultFocus, seed: 1}, out: dir}
	if err := h.loadLast(); err != nil {
		t.Fatal(err)
	}
	if h.focus != "Pods should get a host IP" || h.seed != 7 || h.last.WallTime != "26m53s" {
		t.Errorf("focus %q seed %d wall time %q: not the run's", h.focus, h.seed, h.last.WallTime)
	}
	other := &harness{options: options{focus: "Kubelet", seed: 1}, out: dir}
	if err := other.loadLast(); err == nil {
		t.Error("another focus given on purpose was accepted")
	}
}
