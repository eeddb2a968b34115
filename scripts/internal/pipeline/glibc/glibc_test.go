package glibc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// build compiles a small program that calls into libc through cgo with
// the machine's cc (or without cgo), as the kubelets were built before
// the pinned C toolchain.
func build(t *testing.T, cgo string) string {
	t.Helper()
	dir := t.TempDir()
	src := "package main\n\n// #include <unistd.h>\nimport \"C\"\n\nfunc main() { println(C.sysconf(C._SC_NPROCESSORS_ONLN)) }\n"
	if cgo == "0" {
		src = "package main\n\nfunc main() { println(1) }\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module probe\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", "probe", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo, "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "probe")
}

func TestCheckFloorMachineCC(t *testing.T) {
	bin := build(t, "1")
	newest, err := Newest(bin)
	if err != nil {
		t.Fatal(err)
	}
	// The loader's view, for comparison: objdump -T lists the same versions.
	if out, err := exec.Command("objdump", "-T", bin).Output(); err == nil && !strings.Contains(string(out), "(GLIBC_"+newest+")") {
		t.Errorf("objdump -T does not show GLIBC_%s:\n%s", newest, out)
	}
	if Compare(newest, "2.17") <= 0 {
		t.Fatalf("a cgo binary built by this machine's cc needs only GLIBC_%s: this test expects a build machine whose glibc is newer than 2.17", newest)
	}
	err = CheckFloor(bin, "2.17")
	if err == nil || !strings.Contains(err.Error(), "GLIBC_"+newest) || !strings.Contains(err.Error(), bin) {
		t.Errorf("floor 2.17: error %v, want one naming %s and GLIBC_%s", err, bin, newest)
	}
	if err := CheckFloor(bin, newest); err != nil {
		t.Errorf("floor %s: %v", newest, err)
	}
}

func TestStaticNeedsNothing(t *testing.T) {
	needs, err := Needs(build(t, "0"))
	if err != nil || len(needs) != 0 {
		t.Fatalf("static binary needs %v (%v)", needs, err)
	}
}

func TestCompare(t *testing.T) {
	for _, c := range [][2]string{{"2.3.2", "2.17"}, {"2.2.5", "2.3"}, {"2.17", "2.34"}, {"2.3", "2.3.2"}} {
		if Compare(c[0], c[1]) >= 0 || Compare(c[1], c[0]) <= 0 {
			t.Errorf("%s should be older than %s", c[0], c[1])
		}
	}
	if Compare("2.17", "2.17") != 0 {
		t.Error("2.17 != 2.17")
	}
}
