package nodes

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"kubelet-toolchain/tools/execx"
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
// kept for the repository at root: one place for the rehearsal and the
// nodes' own tests, so the image is built once.
func ImageCacheDir(root string) string { return filepath.Join(root, "_output", "cache", "node-image") }

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
	mirror := o.Mirror
	if mirror == "" {
		var err error
		if mirror, err = AptMirror(o.SourcesFiles, ImageSuite); err != nil {
			return "", err
		}
	}
	release, err := fetchInRelease(ctx, mirror, ImageSuite)
	if err != nil {
		return "", err
	}
	key := imageKey(ImagePackages, ImageVariant, ImageSuite, release)
	tag := imageRepo + ":" + key
	if _, err := o.Engine.Run(ctx, "image", "inspect", "-f", "{{.Id}}", tag); err == nil {
		klog.V(1).Infof("node image %s is current", tag)
		return tag, nil
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return "", fmt.Errorf("node image: %w", err)
	}
	tarPath := filepath.Join(o.Dir, "node-"+key+".tar")
	if _, err := os.Stat(tarPath); err != nil {
		if err := buildRootfs(ctx, mirror, tarPath); err != nil {
			return "", err
		}
	}
	start := time.Now()
	if _, err := o.Engine.RunWith(ctx, nil, 10*time.Minute, "import",
		"--change", "LABEL io.kubelet-toolchain.node-image="+key, tarPath, tag); err != nil {
		return "", fmt.Errorf("node image: import %s: %w", tarPath, err)
	}
	klog.Infof("node image %s imported in %s", tag, time.Since(start).Round(100*time.Millisecond))
	return tag, nil
}

func imageKey(pkgs []string, variant, suite string, inRelease []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "variant=%s\nsuite=%s\npackages=%s\n", variant, suite, strings.Join(pkgs, ","))
	h.Write(inRelease)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// buildRootfs runs mmdebstrap into a temp file beside tarPath, then renames.
func buildRootfs(ctx context.Context, mirror, tarPath string) error {
	if err := ensureMmdebstrap(ctx); err != nil {
		return err
	}
	tmp := tarPath + ".tmp.tar"
	os.Remove(tmp)
	start := time.Now()
	klog.Infof("building node root filesystem (%s, %s) with mmdebstrap", ImageSuite, strings.Join(ImagePackages, ","))
	if _, err := execx.Run(ctx, execx.Cmd{
		Name: "mmdebstrap",
		Args: []string{"--variant=" + ImageVariant, "--include=" + strings.Join(ImagePackages, ","),
			ImageSuite, tmp, "deb " + mirror + " " + ImageSuite + " main"},
		Timeout: 30 * time.Minute,
	}); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("node image: mmdebstrap: %w", err)
	}
	if err := os.Rename(tmp, tarPath); err != nil {
		return fmt.Errorf("node image: %w", err)
	}
	st, _ := os.Stat(tarPath)
	klog.Infof("node root filesystem %s (%d MB) in %s", tarPath, st.Size()>>20, time.Since(start).Round(100*time.Millisecond))
	return nil
}

func ensureMmdebstrap(ctx context.Context) error {
	if _, err := exec.LookPath("mmdebstrap"); err == nil {
		return nil
	}
	klog.Info("installing mmdebstrap")
	if _, err := execx.Run(ctx, execx.Cmd{Name: "apt-get", Args: []string{"install", "-y", "-qq", "--no-install-recommends", "mmdebstrap"},
		Env: []string{"DEBIAN_FRONTEND=noninteractive"}, Timeout: 10 * time.Minute}); err != nil {
		return fmt.Errorf("node image: install mmdebstrap: %w", err)
	}
	return nil
}

func fetchInRelease(ctx context.Context, mirror, suite string) ([]byte, error) {
	url := strings.TrimSuffix(mirror, "/") + "/dists/" + suite + "/InRelease"
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("node image: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("node image: read the Debian snapshot: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("node image: GET %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("node image: GET %s: %w", url, err)
	}
	return b, nil
}

// AptMirror returns the URI apt uses for suite, read from apt's sources
// (deb822 .sources and one-line .list files); files defaults to the
// system's. The mirror is never written anywhere: it is the machine's.
func AptMirror(files []string, suite string) (string, error) {
	if files == nil {
		files = []string{"/etc/apt/sources.list"}
		for _, pat := range []string{"/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources"} {
			m, _ := filepath.Glob(pat)
			files = append(files, m...)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return "", fmt.Errorf("apt sources: %w", err)
		}
		var uri string
		if strings.HasSuffix(f, ".sources") {
			uri = deb822Mirror(string(b), suite)
		} else {
			uri = oneLineMirror(string(b), suite)
		}
		if uri != "" {
			return uri, nil
		}
	}
	return "", fmt.Errorf("apt sources (%s): no deb source for suite %s", strings.Join(files, ", "), suite)
}

func oneLineMirror(text, suite string) string {
	s := bufio.NewScanner(strings.NewReader(text))
	for s.Scan() {
		f := strings.Fields(strings.TrimSpace(s.Text()))
		if len(f) < 3 || f[0] != "deb" {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") { // options: [arch=amd64 signed-by=...]
			for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
				f = f[1:]
			}
			if len(f) == 0 {
				continue
			}
			f = f[1:]
		}
		if len(f) >= 2 && f[1] == suite {
			return f[0]
		}
	}
	return ""
}

func deb822Mirror(text, suite string) string {
	for _, stanza := range strings.Split(text, "\n\n") {
		fields := map[string]string{}
		for _, l := range strings.Split(stanza, "\n") {
			if strings.HasPrefix(l, "#") {
				continue
			}
			if k, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, " ") {
				fields[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
			}
		}
		if !contains(strings.Fields(fields["types"]), "deb") || strings.EqualFold(fields["enabled"], "no") {
			continue
		}
		if contains(strings.Fields(fields["suites"]), suite) {
			if uris := strings.Fields(fields["uris"]); len(uris) > 0 {
				return uris[0]
			}
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
