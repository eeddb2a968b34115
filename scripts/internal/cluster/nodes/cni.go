package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/tools/execx"
)

// CNIPluginsVersion is the oldest github.com/containernetworking/plugins
// the module proxy lists; it still speaks CNI spec 0.3.1, what kubelet 1.7
// and 1.9 use.
const CNIPluginsVersion = "v0.8.6"

// cniPlugins are the plugins a node's network needs (loopback: kubelet
// sets up every sandbox's lo with it).
var cniPlugins = map[string]string{
	"bridge":     "plugins/main/bridge",
	"host-local": "plugins/ipam/host-local",
	"loopback":   "plugins/main/loopback",
	"portmap":    "plugins/meta/portmap",
}

// BuildCNIPlugins builds the CNI plugins from the module proxy (verified
// against the checksum database) into <outDir>/<version>/bin, unless they
// are there already, and returns that directory.
func BuildCNIPlugins(ctx context.Context, outDir string) (string, error) {
	bin := filepath.Join(outDir, CNIPluginsVersion, "bin")
	if haveAll(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("CNI plugins %s: %w", CNIPluginsVersion, err)
	}
	// Rehearsals side by side and the nodes suite share this directory.
	unlock, err := fsutil.Lock(filepath.Join(filepath.Dir(bin), ".lock"), nil)
	if err != nil {
		return "", fmt.Errorf("CNI plugins %s: %w", CNIPluginsVersion, err)
	}
	defer unlock()
	if haveAll(bin) {
		return bin, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(bin), ".bin-")
	if err != nil {
		return "", fmt.Errorf("CNI plugins %s: %w", CNIPluginsVersion, err)
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	args := []string{"install", "-trimpath", "-ldflags=-s -w"}
	for _, p := range cniPlugins {
		args = append(args, "github.com/containernetworking/plugins/"+p+"@"+CNIPluginsVersion)
	}
	// A module-mode install outside any module: every module is checked
	// against the checksum database (GONOSUMDB/GONOSUMCHECK/GOFLAGS from
	// the caller's environment would weaken that; they are reset here).
	if _, err := execx.Run(ctx, execx.Cmd{
		Name: "go", Args: args, Dir: tmp,
		Env: []string{"GOBIN=" + tmp, "CGO_ENABLED=0", "GOFLAGS=-mod=mod -buildvcs=false",
			"GONOSUMDB=", "GONOSUMCHECK=", "GOPRIVATE=", "GOINSECURE=", "GO111MODULE=on", "GOWORK=off"},
		Timeout: 20 * time.Minute,
	}); err != nil {
		return "", fmt.Errorf("CNI plugins %s: build: %w", CNIPluginsVersion, err)
	}
	if !haveAll(tmp) {
		return "", fmt.Errorf("CNI plugins %s: build left an incomplete set in %s", CNIPluginsVersion, tmp)
	}
	os.RemoveAll(bin)
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("CNI plugins %s: %w", CNIPluginsVersion, err)
	}
	klog.Infof("CNI plugins %s built in %s", CNIPluginsVersion, time.Since(start).Round(100*time.Millisecond))
	return bin, nil
}

func haveAll(dir string) bool {
	for name := range cniPlugins {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// CNIConfig is a node's network: a bridge (cni0) with host-local
// addresses on podCIDR, and portmap for hostPorts. No masquerade here:
// pods of other nodes see the real pod IP; the supervisor masquerades
// only traffic leaving the cluster CIDR.
func CNIConfig(podCIDR string) []byte {
	conf := map[string]any{
		"cniVersion": "0.3.1",
		"name":       "rehearsal",
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      "cni0",
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":   "host-local",
					"subnet": podCIDR,
					"routes": []any{map[string]any{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{
				"type":         "portmap",
				"capabilities": map[string]any{"portMappings": true},
				"snat":         true,
			},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		panic(err) // a literal map always marshals
	}
	return append(b, '\n')
}
