// Package gomod asks the go command for modules: it downloads them through
// the configured module proxy, verified against the checksum database, and
// checks that what sits in the module cache still matches the pinned hash.
package gomod

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/mod/sumdb/dirhash"

	"kubelet-toolchain/tools/execx"
)

// Module is one entry of `go mod download -json`.
type Module struct {
	Path     string
	Version  string
	Error    string
	Info     string
	GoMod    string
	Zip      string
	Dir      string
	Sum      string
	GoModSum string
}

// ID is path@version.
func (m Module) ID() string { return m.Path + "@" + m.Version }

// Download fetches the given path@version modules in one go command (which
// downloads in parallel) and returns one result per module, in order. A
// module the proxy refuses comes back with Error set; err is only for
// failures of the go command itself.
func Download(ctx context.Context, toolchain string, ids ...string) ([]Module, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "gomod-download-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var stdout bytes.Buffer
	_, runErr := execx.Run(ctx, execx.Cmd{
		Name:   "go",
		Args:   append([]string{"mod", "download", "-json"}, ids...),
		Dir:    tmp, // outside any module, so no go.mod is read or written
		Env:    append(Env(toolchain), "GOFLAGS=-mod=mod"),
		Stdout: &stdout,
	})
	mods, err := decode(&stdout)
	if err != nil {
		return nil, fmt.Errorf("reading go mod download output: %w", err)
	}
	// go mod download exits 1 when any module fails; the JSON says which.
	if len(mods) != len(ids) {
		if runErr != nil {
			return nil, runErr
		}
		return nil, fmt.Errorf("go mod download returned %d results for %d modules", len(mods), len(ids))
	}
	return mods, nil
}

func decode(r io.Reader) ([]Module, error) {
	var out []Module
	dec := json.NewDecoder(r)
	for {
		var m Module
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
}

// Env is the environment every go command of this toolchain runs with:
// the pinned toolchain and no workspace file from the caller.
func Env(toolchain string) []string {
	env := []string{"GOWORK=off", "GO111MODULE=on"}
	if toolchain != "" {
		env = append(env, "GOTOOLCHAIN="+toolchain)
	}
	return env
}

// ErrCorrupt marks a module cache entry whose files no longer hash to the pin.
var ErrCorrupt = errors.New("module cache entry does not match its pinned hash")

// VerifyDir hashes an extracted module directory and compares it with sum.
func VerifyDir(dir, path, version, sum string) error {
	got, err := dirhash.HashDir(dir, path+"@"+version, dirhash.Hash1)
	if err != nil {
		return fmt.Errorf("hashing %s@%s: %w", path, version, err)
	}
	if got != sum {
		return fmt.Errorf("%w: %s@%s in %s hashes to %s, pinned %s (remove that directory, or run `go clean -modcache`, and build again)",
			ErrCorrupt, path, version, dir, got, sum)
	}
	return nil
}

// Vendor runs `go mod vendor` in a modules-era tree; the go command checks
// every module against go.sum (and the checksum database for what go.sum
// lacks).
func Vendor(ctx context.Context, tree, toolchain string) error {
	_, err := execx.Run(ctx, execx.Cmd{
		Name: "go", Args: []string{"mod", "vendor"}, Dir: tree,
		// -mod=mod lets the go command read an edited go.mod.
		Env: append(Env(toolchain), "GOFLAGS=-mod=mod"),
	})
	return err
}

// AddedLines returns the sorted lines of after (a go.sum) that before lacks.
func AddedLines(before, after []byte) []string {
	had := map[string]bool{}
	for _, l := range strings.Split(string(before), "\n") {
		had[l] = true
	}
	var out []string
	for _, l := range strings.Split(string(after), "\n") {
		if l != "" && !had[l] {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}
