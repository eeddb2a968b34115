package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubelet-toolchain/tools/execx"
)

// buildMain compiles a GOPATH-mode main package (the way 1.7/1.9 kubelets
// are built) from the given files and returns the binary.
func buildMain(t *testing.T, files map[string]string) string {
	t.Helper()
	gopath := t.TempDir()
	dir := filepath.Join(gopath, "src", "example.com", "cmd", "m")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(gopath, "m")
	if _, err := execx.Run(context.Background(), execx.Cmd{Name: "go", Args: []string{"build", "-o", bin, "example.com/cmd/m"},
		Dir: gopath, Env: []string{"GO111MODULE=off", "GOPATH=" + gopath, "GOFLAGS=", "GOWORK=off"}}); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestCheckGODEBUG(t *testing.T) {
	main := "package main\n\nfunc main() {}\n"
	// The real overlay file, so the test fails if it stops doing its job.
	overlay, err := os.ReadFile("../../../../overlay/secure-defaults/cmd/kubelet/zz_godebug.go")
	if err != nil {
		t.Fatal(err)
	}

	legacy := buildMain(t, map[string]string{"main.go": main})
	err = CheckGODEBUG(legacy)
	if err == nil {
		t.Fatal("a GOPATH build without the overlay passed the check")
	}
	for _, kv := range InsecureGODEBUG {
		if !strings.Contains(err.Error(), kv) {
			t.Errorf("GOPATH build: %s not reported in %v", kv, err)
		}
	}

	secure := buildMain(t, map[string]string{"main.go": main, "zz_godebug.go": string(overlay)})
	if err := CheckGODEBUG(secure); err != nil {
		t.Fatalf("with overlay/secure-defaults: %v", err)
	}
	def, _ := DefaultGODEBUG(secure)
	// Compatibility settings the overlay deliberately leaves at the era's values.
	for _, kv := range []string{"asynctimerchan=1", "panicnil=1", "randseednop=0"} {
		if !strings.Contains(","+def+",", ","+kv+",") {
			t.Errorf("overlay changed a compatibility setting: want %s in %s", kv, def)
		}
	}
}
