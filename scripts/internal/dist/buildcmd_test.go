package dist

import (
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/matrix"
)

func TestBuildCommand(t *testing.T) {
	r := &matrix.Release{Release: "1.9.11", GitCommit: strings.Repeat("a", 40), BuildDate: time.Unix(1538170522, 0).UTC(),
		Era: matrix.EraGodeps, CGO: true, Go: "go1.26.8", Series: matrix.Series{Build: "k19-build", Fixes: "k19-fixes"}}
	got := BuildCommand(r, matrix.Patched)
	for _, want := range []string{`GOPATH="$PWD"`, "GO111MODULE=off", "CGO_ENABLED=1", "GOTOOLCHAIN=go1.26.8", "SOURCE_DATE_EPOCH=1538170522", "-trimpath", "-o kubelet k8s.io/kubernetes/cmd/kubelet", "gitVersion=v1.9.11+patched.k19-fixes"} {
		if !strings.Contains(got, want) {
			t.Errorf("godeps command lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, gopathMarker) || strings.Contains(got, "\n") {
		t.Errorf("not a clean one-liner:\n%s", got)
	}
	r.Era, r.CGO = matrix.EraModules, false
	got = BuildCommand(r, matrix.Vanilla)
	for _, want := range []string{"cd src/k8s.io/kubernetes && env ", "GOFLAGS=-mod=vendor", `-o "$OLDPWD/kubelet" ./cmd/kubelet`, "CGO_ENABLED=0"} {
		if !strings.Contains(got, want) {
			t.Errorf("modules command lacks %q:\n%s", want, got)
		}
	}
}
