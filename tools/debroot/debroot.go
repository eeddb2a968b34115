// Package debroot builds Debian root filesystems with mmdebstrap from the
// mirror apt is configured with: the rehearsal's node image and the
// conformance images that need a real distribution (nginx, curl). A
// root's key names what it was built from, the mirror's InRelease (the
// Debian snapshot) included, so an image is rebuilt only when that changes.
package debroot

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
	"slices"
	"strings"
	"time"

	"kubelet-toolchain/tools/execx"
)

// Root is one root filesystem: a suite, an mmdebstrap variant and the
// packages installed on top of it.
type Root struct {
	Suite, Variant string
	Packages       []string
	// Mirror is the Debian mirror; empty: the one apt is configured with.
	Mirror string
}

// Key is the root's cache key: its packages, variant and suite and the
// sha256 of the suite's InRelease on the mirror. sources overrides apt's
// source files (tests); nil reads the system's.
func (r *Root) Key(ctx context.Context, sources []string) (string, error) {
	if r.Mirror == "" {
		m, err := Mirror(sources, r.Suite)
		if err != nil {
			return "", err
		}
		r.Mirror = m
	}
	release, err := InRelease(ctx, r.Mirror, r.Suite)
	if err != nil {
		return "", err
	}
	return Key(r.Packages, r.Variant, r.Suite, release), nil
}

// Key hashes what a root is built from.
func Key(pkgs []string, variant, suite string, inRelease []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "variant=%s\nsuite=%s\npackages=%s\n", variant, suite, strings.Join(pkgs, ","))
	h.Write(inRelease)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Build runs mmdebstrap into a temporary file beside tarPath, then renames
// it into place (Key must have run: it settles the mirror).
func (r *Root) Build(ctx context.Context, tarPath string, logf func(string, ...any)) error {
	if err := ensureMmdebstrap(ctx, logf); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(tarPath), 0o755); err != nil {
		return err
	}
	tmp := tarPath + ".tmp.tar"
	os.Remove(tmp)
	start := time.Now()
	logf("building a %s root filesystem (%s, %s) with mmdebstrap", r.Variant, r.Suite, strings.Join(r.Packages, ","))
	if _, err := execx.Run(ctx, execx.Cmd{
		Name: "mmdebstrap",
		Args: []string{"--variant=" + r.Variant, "--include=" + strings.Join(r.Packages, ","),
			r.Suite, tmp, "deb " + r.Mirror + " " + r.Suite + " main"},
		Timeout: 30 * time.Minute,
	}); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("mmdebstrap: %w", err)
	}
	if err := os.Rename(tmp, tarPath); err != nil {
		return err
	}
	st, _ := os.Stat(tarPath)
	logf("root filesystem %s (%d MB) in %s", tarPath, st.Size()>>20, time.Since(start).Round(100*time.Millisecond))
	return nil
}

func ensureMmdebstrap(ctx context.Context, logf func(string, ...any)) error {
	if _, err := exec.LookPath("mmdebstrap"); err == nil {
		return nil
	}
	logf("installing mmdebstrap")
	if _, err := execx.Run(ctx, execx.Cmd{Name: "apt-get", Args: []string{"install", "-y", "-qq", "--no-install-recommends", "mmdebstrap"},
		Env: []string{"DEBIAN_FRONTEND=noninteractive"}, Timeout: 10 * time.Minute}); err != nil {
		return fmt.Errorf("install mmdebstrap: %w", err)
	}
	return nil
}

// InRelease fetches the suite's InRelease from the mirror.
func InRelease(ctx context.Context, mirror, suite string) ([]byte, error) {
	url := strings.TrimSuffix(mirror, "/") + "/dists/" + suite + "/InRelease"
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read the Debian snapshot: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return b, nil
}

// Mirror returns the URI apt uses for suite, read from apt's sources
// (deb822 .sources and one-line .list files); files defaults to the
// system's. The mirror is never written anywhere: it is the machine's.
func Mirror(files []string, suite string) (string, error) {
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
		if !slices.Contains(strings.Fields(fields["types"]), "deb") || strings.EqualFold(fields["enabled"], "no") {
			continue
		}
		if slices.Contains(strings.Fields(fields["suites"]), suite) {
			if uris := strings.Fields(fields["uris"]); len(uris) > 0 {
				return uris[0]
			}
		}
	}
	return ""
}
