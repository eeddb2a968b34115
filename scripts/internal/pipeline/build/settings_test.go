package build

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

func TestCheckBuildSettings(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module probe\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	cmd := exec.Command("go", "build", "-tags", "selinux", "-o", "probe", ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	bin := filepath.Join(dir, "probe")
	r := &matrix.Release{Release: "1.18.6", Tags: []string{"selinux"}}
	if err := CheckBuildSettings(bin, r, false); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		tags []string
		cgo  bool
		want string
	}{
		"the official build's tag missing": {nil, false, `-tags="selinux"`},
		"cgo expected":                     {[]string{"selinux"}, true, `CGO_ENABLED="0"`},
	} {
		r.Tags = tc.tags
		if err := CheckBuildSettings(bin, r, tc.cgo); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "1.18.6") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
