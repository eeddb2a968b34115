package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

func TestClampConfig(t *testing.T) {
	in := []byte(`{"ociVersion":"1.0.2","process":{"args":["/pause"],"oomScoreAdj":-998,"x-unknown":{"a":[1,2]}},"root":{"path":"rootfs"},"annotations":{"k":"v"}}`)
	out, changed, err := clamp(in, true, allCaps)
	if err != nil || !changed {
		t.Fatalf("clamp: changed=%v err=%v", changed, err)
	}
	want := decode(t, in)
	want["process"].(map[string]any)["oomScoreAdj"] = float64(0)
	if got := decode(t, out); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestClampLeavesOthersAlone(t *testing.T) {
	for _, tc := range []struct {
		in        string
		inProcess bool
	}{
		{`{"process":{"oomScoreAdj":0}}`, true},
		{`{"process":{"oomScoreAdj":500}}`, true},
		{`{"process":{"args":["x"]}}`, true},
		{`{"process":null}`, true},
		{`{"root":{}}`, true},
		{`{"oomScoreAdj":1000}`, false},
		{`{"args":["sh"]}`, false},
	} {
		out, changed, err := clamp([]byte(tc.in), tc.inProcess, allCaps)
		if err != nil || changed || string(out) != tc.in {
			t.Errorf("%s: out=%s changed=%v err=%v", tc.in, out, changed, err)
		}
	}
}

func TestClampProcessJSON(t *testing.T) {
	out, changed, err := clamp([]byte(`{"args":["sh"],"oomScoreAdj":-1,"cwd":"/"}`), false, allCaps)
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	got := decode(t, out)
	want := map[string]any{"args": []any{"sh"}, "oomScoreAdj": float64(0), "cwd": "/"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestClampBadJSON(t *testing.T) {
	if _, _, err := clamp([]byte(`{`), true, allCaps); err == nil {
		t.Fatal("want error")
	}
	if _, _, err := clamp([]byte(`{"process":{"oomScoreAdj":"x"}}`), true, allCaps); err == nil {
		t.Fatal("want error")
	}
}

func TestClampArgs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	proc := filepath.Join(dir, "proc.json")
	write := func() {
		os.WriteFile(cfg, []byte(`{"process":{"oomScoreAdj":-998}}`), 0o600)
		os.WriteFile(proc, []byte(`{"oomScoreAdj":-5}`), 0o600)
	}
	check := func(name string, path string, inProcess bool, want int) {
		t.Helper()
		b, _ := os.ReadFile(path)
		m := decode(t, b)
		if inProcess {
			m = m["process"].(map[string]any)
		}
		if got := m["oomScoreAdj"]; got != float64(want) {
			t.Errorf("%s: oomScoreAdj=%v want %d", name, got, want)
		}
	}
	for _, args := range [][]string{
		{"--root", "/run/x", "--log", "/tmp/l", "--log-format", "json", "create", "--bundle", dir, "id"},
		{"create", "--pid-file", "p", "--console-socket", "/s", "-b", dir, "id"},
		{"--debug", "run", "--bundle=" + dir, "id"},
	} {
		write()
		if err := clampArgs(args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		check("create", cfg, true, 0)
		check("untouched", proc, false, -5)
	}
	for _, args := range [][]string{
		{"--root", "/run/x", "exec", "--process", proc, "--detach", "id"},
		{"exec", "-p=" + proc, "id"},
	} {
		write()
		if err := clampArgs(args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		check("exec", proc, false, 0)
		check("untouched", cfg, true, -998)
	}
	// Words after the container id belong to the command, not to runc.
	write()
	if err := clampArgs([]string{"exec", "--tty", "id", "ls", "-p", proc}); err != nil {
		t.Fatal(err)
	}
	check("exec command args", proc, false, -5)
	// Other subcommands are passed through without reading anything.
	if err := clampArgs([]string{"--root", "/nonexistent", "delete", "id"}); err != nil {
		t.Fatal(err)
	}
	// No --bundle: runc uses the current directory.
	write()
	t.Chdir(dir)
	if err := clampArgs([]string{"create", "id"}); err != nil {
		t.Fatal(err)
	}
	check("default bundle", cfg, true, 0)
}
