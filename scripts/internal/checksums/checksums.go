// Package checksums keeps the expected sha256 of every release+variant
// binary in one committed file, in the sha256sum format eks-distro uses.
package checksums

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// File maps an _output-relative binary path to its expected sha256.
type File map[string]string

var line = regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)

// Load reads a CHECKSUMS file; a missing file is an empty one.
func Load(path string) (File, error) {
	f := File{}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return f, nil
	} else if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		m := line.FindStringSubmatch(t)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: not \"<sha256>  <path>\": %q", path, n, t)
		}
		f[m[2]] = m[1]
	}
	return f, sc.Err()
}

// Marshal renders the file sorted by path.
func (f File) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString("# Expected sha256 of each reproducible kubelet build, relative to _output/.\n" +
		"# Update (make update-checksums) only when a pin, a patch, the build flags or the\n" +
		"# Go toolchain changed on purpose; otherwise a mismatch means the build is not reproducible.\n")
	paths := make([]string, 0, len(f))
	for p := range f {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "%s  %s\n", f[p], p)
	}
	return b.Bytes()
}

// Key is the CHECKSUMS path of a release+variant binary.
func Key(release, variant string) string {
	return release + "/" + variant + "/bin/linux/amd64/kubelet"
}
