package checksums

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
)

// InputsFileName is the record beside CHECKSUMS of what decided each
// target's bytes when its sums were recorded: the same targets, written
// together with CHECKSUMS by make update-checksums. CI builds a target
// only when its inputs differ from this record.
const InputsFileName = "CHECKSUMS.inputs"

// Input is one of the things that decide a target's bytes, by name (for
// instance "lock" or "series.2.k19-fixes") with its digest.
type Input struct{ Name, Digest string }

// Inputs are a target's inputs, in the order they act on it.
type Inputs []Input

// Lines is the inputs as the record and a built target's .inputs file
// hold them: "<target>  <name>  <digest>".
func (in Inputs) Lines(target string) []byte {
	var b bytes.Buffer
	for _, i := range in {
		fmt.Fprintf(&b, "%s  %s  %s\n", target, i.Name, i.Digest)
	}
	return b.Bytes()
}

// Differ names the inputs in which in differs from rec: changed, added
// (absent from rec) or removed (absent from in), in in's order.
func (in Inputs) Differ(rec Inputs) []string {
	old := map[string]string{}
	for _, i := range rec {
		old[i.Name] = i.Digest
	}
	var out []string
	seen := map[string]bool{}
	for _, i := range in {
		seen[i.Name] = true
		switch d, ok := old[i.Name]; {
		case !ok:
			out = append(out, i.Name+" (new)")
		case d != i.Digest:
			out = append(out, i.Name)
		}
	}
	for _, i := range rec {
		if !seen[i.Name] {
			out = append(out, i.Name+" (gone)")
		}
	}
	return out
}

// InputRecord maps a target ("1.9.11/patched", "1.9.11/control-plane")
// to its recorded inputs.
type InputRecord map[string]Inputs

// LoadInputs reads a record (CHECKSUMS.inputs or a built target's
// .inputs); a missing file is an empty record.
func LoadInputs(path string) (InputRecord, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return InputRecord{}, nil
	} else if err != nil {
		return nil, err
	}
	rec := InputRecord{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.Fields(t)
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: not \"<target>  <input>  <digest>\": %q", path, n, t)
		}
		rec[f[0]] = append(rec[f[0]], Input{f[1], f[2]})
	}
	return rec, sc.Err()
}

// Marshal writes the record with its header, targets sorted.
func (r InputRecord) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString(`# What decided each target's bytes when CHECKSUMS recorded its sums, relative to
# the checkout: the module zip's sum, the lock, each series' diffs and overlay files in
# application order, the build line (Go, tags, cgo, ldflags, the C toolchain pin) and
# the driver's code. Written with CHECKSUMS by make update-checksums, from the inputs
# each binary was built from; CI builds a target whose inputs differ from these.
`)
	targets := make([]string, 0, len(r))
	for t := range r {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		b.Write(r[t].Lines(t))
	}
	return b.Bytes()
}

// Equal reports whether two targets' inputs are the same.
func (in Inputs) Equal(o Inputs) bool { return slices.Equal(in, o) }
