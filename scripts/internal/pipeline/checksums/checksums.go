// Package checksums reads and writes files in sha256sum's format
// ("<sha256>  <path>" lines): the committed CHECKSUMS with the expected
// sha256 of every release+variant kubelet (the format eks-distro uses),
// and the SHA256SUMS next to packaged artifacts. It also compares the
// kubelets built under _output/ with CHECKSUMS.
package checksums

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// FileName is the committed file of expected kubelet sums, at the
// repository root; its paths are relative to _output/.
const FileName = "CHECKSUMS"

// File maps a path to its sha256.
type File map[string]string

// sha256sum writes "  " before a path hashed in text mode, " *" in binary mode.
var line = regexp.MustCompile(`^([0-9a-f]{64}) [ *](\S+)$`)

// Load reads a sums file; a missing file is an empty one.
func Load(path string) (File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, nil
	} else if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse reads sums in sha256sum format; blank lines and # comments are
// skipped. name is used in errors.
func Parse(data []byte, name string) (File, error) {
	f := File{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		m := line.FindStringSubmatch(t)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: not \"<sha256>  <path>\": %q", name, n, t)
		}
		f[m[2]] = m[1]
	}
	return f, sc.Err()
}

// Lines renders f in sha256sum format, sorted by path: what
// `sha256sum -c` reads.
func (f File) Lines() []byte {
	paths := make([]string, 0, len(f))
	for p := range f {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b bytes.Buffer
	for _, p := range paths {
		fmt.Fprintf(&b, "%s  %s\n", f[p], p)
	}
	return b.Bytes()
}

// Marshal renders CHECKSUMS: a header saying when to update it, then Lines.
func (f File) Marshal() []byte {
	return append([]byte("# Expected sha256 of each reproducible build (kubelets, the control planes under\n"+
		"# <release>/control-plane/bin/, e2e_node.test under <release>/conformance/bin/), relative to _output/.\n"+
		"# Update (make update-checksums) only when a pin, a patch, the build flags or the\n"+
		"# Go toolchain changed on purpose; otherwise a mismatch means the build is not reproducible.\n"), f.Lines()...)
}

// Key is the CHECKSUMS path of a release+variant binary.
func Key(release, variant string) string {
	return release + "/" + variant + "/bin/linux/amd64/kubelet"
}

// KeyOf is the CHECKSUMS path of a file under outputDir.
func KeyOf(outputDir, path string) string {
	rel, err := filepath.Rel(outputDir, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// SHA256 returns the hex sha256 of a file.
func SHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Entry is one built kubelet and its sha256.
type Entry struct {
	Key, SHA256 string
}

// BuiltKeys hashes the files under outputDir that keys name, in order;
// a file that does not exist is left out.
func BuiltKeys(outputDir string, keys []string) ([]Entry, error) {
	var out []Entry
	for _, key := range keys {
		sum, err := SHA256(filepath.Join(outputDir, filepath.FromSlash(key)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, Entry{key, sum})
	}
	return out, nil
}

// ErrNothingBuilt is returned by Verify when there is nothing to compare.
var ErrNothingBuilt = errors.New("no built kubelet or control plane under _output/ to check (make kubelet or make control-plane first)")

// Verify compares built with f. Each match is written to w as an "ok"
// line, then each mismatch or missing entry with the expected and actual
// sums.
func (f File) Verify(built []Entry, w io.Writer) error {
	var failed []string
	for _, b := range built {
		switch exp, ok := f[b.Key]; {
		case !ok:
			failed = append(failed, fmt.Sprintf("%s: no expected checksum\n  actual   %s", b.Key, b.SHA256))
		case exp != b.SHA256:
			failed = append(failed, fmt.Sprintf("%s: MISMATCH\n  expected %s\n  actual   %s", b.Key, exp, b.SHA256))
		default:
			fmt.Fprintf(w, "ok  %s  %s\n", b.SHA256, b.Key)
		}
	}
	for _, l := range failed {
		fmt.Fprintln(w, l)
	}
	switch {
	case len(built) == 0:
		return ErrNothingBuilt
	case len(failed) > 0:
		return fmt.Errorf("%d of %d binaries do not match %s; update it only if a pin, patch, flag or toolchain changed on purpose", len(failed), len(built), FileName)
	}
	return nil
}

// Update records built in f, writing each as a sha256sum line to w.
func (f File) Update(built []Entry, w io.Writer) {
	for _, b := range built {
		f[b.Key] = b.SHA256
		fmt.Fprintf(w, "%s  %s\n", b.SHA256, b.Key)
	}
}

// Note tells w, after a build, how sum compares with the recorded entry
// for key: nothing when they match, a note when there is no entry, a
// warning with both sums when they differ (verify-checksums fails on it).
func (f File) Note(key, sum string, w io.Writer) {
	switch exp, ok := f[key]; {
	case !ok:
		fmt.Fprintf(w, "note: CHECKSUMS has no entry for %s (make update-checksums records it)\n", key)
	case exp != sum:
		fmt.Fprintf(w, "WARNING: %s differs from CHECKSUMS\n  expected %s\n  actual   %s\n  (make verify-checksums fails on this)\n", key, exp, sum)
	}
}
