package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/tools/execx"
)

// etcdPackage is Debian's etcd server (3.4.23 in bookworm).
const etcdPackage = "etcd-server"

// EnsureEtcd returns the path of an etcd binary from Debian's etcd-server
// package, unpacked under cacheDir. The package is fetched with apt-get
// download (apt checks it against the signed archive index) and unpacked
// with dpkg-deb -x, never installed: installing it would enable and start
// a system etcd on the default ports of a machine with systemd.
func EnsureEtcd(ctx context.Context, cacheDir string, log func(string, ...any)) (string, error) {
	out, err := execx.Run(ctx, execx.Cmd{Name: "apt-cache", Args: []string{"policy", etcdPackage}})
	if err != nil {
		return "", fmt.Errorf("looking up Debian's %s: %w", etcdPackage, err)
	}
	version := candidate(string(out))
	if version == "" {
		// Package lists may be missing on a fresh machine.
		if _, err := execx.Run(ctx, execx.Cmd{Name: "apt-get", Args: []string{"update", "-qq"}}); err != nil {
			return "", fmt.Errorf("apt-get update (to find %s): %w", etcdPackage, err)
		}
		out, _ = execx.Run(ctx, execx.Cmd{Name: "apt-cache", Args: []string{"policy", etcdPackage}})
		if version = candidate(string(out)); version == "" {
			return "", fmt.Errorf("Debian's %s is not available from this machine's apt sources", etcdPackage)
		}
	}
	dir := filepath.Join(cacheDir, etcdPackage+"_"+sanitize(version))
	bin := filepath.Join(dir, "usr", "bin", "etcd")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	// Rehearsals side by side share the cache: one fetches.
	unlock, err := fsutil.Lock(dir+".lock", nil)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	log("fetching Debian's %s %s", etcdPackage, version)
	tmp, err := os.MkdirTemp(cacheDir, ".etcd-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if _, err := execx.Run(ctx, execx.Cmd{Name: "apt-get", Args: []string{"download", etcdPackage + "=" + version}, Dir: tmp}); err != nil {
		return "", fmt.Errorf("downloading %s %s: %w", etcdPackage, version, err)
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("apt-get download %s left %d .deb files", etcdPackage, len(debs))
	}
	root := filepath.Join(tmp, "root")
	if _, err := execx.Run(ctx, execx.Cmd{Name: "dpkg-deb", Args: []string{"-x", debs[0], root}}); err != nil {
		return "", fmt.Errorf("unpacking %s: %w", debs[0], err)
	}
	if _, err := os.Stat(filepath.Join(root, "usr", "bin", "etcd")); err != nil {
		return "", fmt.Errorf("%s %s has no usr/bin/etcd", etcdPackage, version)
	}
	if err := fsutil.ReplaceDir(root, dir); err != nil {
		return "", err
	}
	return bin, nil
}

var candidateRE = regexp.MustCompile(`(?m)^\s*Candidate:\s*(\S+)`)

// candidate is the version apt-cache policy would install ("" for none).
func candidate(policy string) string {
	m := candidateRE.FindStringSubmatch(policy)
	if m == nil || m[1] == "(none)" {
		return ""
	}
	return m[1]
}

func sanitize(v string) string { return strings.NewReplacer(":", "_", "/", "_").Replace(v) }
