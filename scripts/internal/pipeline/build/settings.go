package build

import (
	"debug/buildinfo"
	"fmt"
	"strings"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

// CheckBuildSettings fails unless binary records (debug/buildinfo, what
// `go version -m` prints) the release's tags and the cgo setting its
// target was built with: what the fetch stage checked against the tree's
// official build is what the binary carries.
func CheckBuildSettings(binary string, r *matrix.Release, cgo bool) error {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("reading build info of %s: %w", binary, err)
	}
	got := map[string]string{}
	for _, s := range info.Settings {
		got[s.Key] = s.Value
	}
	want := map[string]string{"-tags": strings.Join(r.Tags, ","), "CGO_ENABLED": "0"}
	if cgo {
		want["CGO_ENABLED"] = "1"
	}
	for k, v := range want {
		if got[k] != v {
			return fmt.Errorf("%s was built with %s=%q; release %s's official build uses %q", binary, k, got[k], r.Release, v)
		}
	}
	return nil
}
