package nodes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/tools/debroot"
)

// Node image contents. Changing either rebuilds the image.
const (
	ImageSuite   = "bookworm"
	ImageVariant = "minbase"
	imageRepo    = "kubelet-toolchain/node"
)

// ImagePackages are installed on top of minbase: the inner Docker Engine,
// what kubelet and kube-proxy call (iptables, ip, conntrack, ethtool,
// socat, nsenter, mount), tini as PID 1 (reaps the kubelet's children).
var ImagePackages = []string{
	"docker.io", "iptables", "iproute2", "conntrack", "ethtool", "socat",
	"util-linux", "mount", "ca-certificates", "procps", "tini",
}

// ImageCacheDir is where the node image's root filesystem tarballs are
// kept, named by their cache key: one place for every checkout's
// rehearsals and nodes tests, so the image is built once per Debian
// snapshot, not once per clean clone (mmdebstrap: minutes).
func ImageCacheDir() string { return fsutil.UserCache("node-image") }

// ImageOptions says where the node image is built.
type ImageOptions struct {
	Engine Engine
	// Dir keeps the root filesystem tarballs (_output/rehearsal/image).
	Dir string
	// Mirror is the Debian mirror; empty = the one apt is configured with.
	Mirror string
	// SourcesFiles override where apt's sources are read from (tests).
	SourcesFiles []string
}

// EnsureImage returns the node image's tag on the engine, building it
// only when no image with the current cache key exists: the key is the
// package list, the variant, the suite and the sha256 of the suite's
// InRelease on the mirror (the Debian snapshot).
func EnsureImage(ctx context.Context, o ImageOptions) (string, error) {
	root, key, err := o.root(ctx)
	if err != nil {
		return "", err
	}
	tag := imageRepo + ":" + key
	if _, err := o.Engine.Run(ctx, "image", "inspect", "-f", "{{.Id}}", tag); err == nil {
		klog.V(1).Infof("node image %s is current", tag)
		return tag, nil
	}
	tarPath, err := o.buildRoot(ctx, root, key)
	if err != nil {
		return "", err
	}
	start := time.Now()
	if _, err := o.Engine.RunWith(ctx, nil, 10*time.Minute, "import",
		"--change", "LABEL io.kubelet-toolchain.node-image="+key, tarPath, tag); err != nil {
		return "", fmt.Errorf("node image: import %s: %w", tarPath, err)
	}
	klog.Infof("node image %s imported in %s", tag, time.Since(start).Round(100*time.Millisecond))
	return tag, nil
}

// PrepareImage builds the node image's root filesystem into o.Dir unless
// the current one is there: what EnsureImage imports, made ahead of the
// rehearsals (e2e-targets builds it with their control planes, so the
// minutes mmdebstrap takes on a fresh machine fall outside the specs'
// timeouts). It needs no engine.
func PrepareImage(ctx context.Context, o ImageOptions) (string, error) {
	root, key, err := o.root(ctx)
	if err != nil {
		return "", err
	}
	return o.buildRoot(ctx, root, key)
}

// root is the node image's root filesystem and its cache key.
func (o ImageOptions) root(ctx context.Context) (debroot.Root, string, error) {
	root := debroot.Root{Suite: ImageSuite, Variant: ImageVariant, Packages: ImagePackages, Mirror: o.Mirror}
	key, err := root.Key(ctx, o.SourcesFiles)
	if err != nil {
		return root, "", fmt.Errorf("node image: %w", err)
	}
	return root, key, nil
}

// buildRoot returns the tarball of root under o.Dir, building it unless
// it is there. Rehearsals side by side, the nodes suite and e2e-targets
// share the cache: one builds, the others wait for its tarball.
func (o ImageOptions) buildRoot(ctx context.Context, root debroot.Root, key string) (string, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return "", fmt.Errorf("node image: %w", err)
	}
	tarPath := filepath.Join(o.Dir, "node-"+key+".tar")
	unlock, err := fsutil.Lock(tarPath+".lock", func() { klog.Infof("node image: waiting for another build of %s", tarPath) })
	if err != nil {
		return "", fmt.Errorf("node image: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(tarPath); err != nil {
		if err := root.Build(ctx, tarPath, klog.Infof); err != nil {
			return "", fmt.Errorf("node image: %w", err)
		}
	}
	return tarPath, nil
}
