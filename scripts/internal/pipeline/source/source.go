// Package source obtains a release's Kubernetes source tree: the module zip
// from the module proxy (or one supplied by hand), verified against the
// pinned h1: sum before a single file is extracted.
package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/pipeline/gomod"
)

// ModulePath is the module every release is fetched as.
const ModulePath = "k8s.io/kubernetes"

// ErrRefused is returned when the module proxy will not serve a release.
var ErrRefused = errors.New("module proxy refused the release")

// ErrHashMismatch is returned when a zip does not hash to the pinned sum.
var ErrHashMismatch = errors.New("source zip does not match the pinned sum")

// Zip returns the path of a verified module zip for r. When override is
// set (KUBE_SOURCE_ZIP) that file is used instead of the proxy, and only
// if it hashes to the pinned sum.
func Zip(ctx context.Context, r *matrix.Release, override string) (string, error) {
	if override != "" {
		return override, Verify(override, r)
	}
	mods, err := gomod.Download(ctx, r.Go, ModulePath+"@"+r.ModuleVersion())
	if err != nil {
		return "", fmt.Errorf("fetching %s@%s: %w", ModulePath, r.ModuleVersion(), err)
	}
	m := mods[0]
	if m.Error != "" {
		way := "use another release"
		if r.StandIn != "" {
			way = fmt.Sprintf("build VERSION=%s instead (%s)", r.StandIn, r.Note)
		}
		return "", fmt.Errorf("%w: release %s (%s@%s, pinned %s): the module proxy answered: %s\n"+
			"Two ways out:\n"+
			"  1. %s\n"+
			"  2. supply the module zip by hand: KUBE_SOURCE_ZIP=/path/to/%s.zip; it is accepted only if it hashes to %s",
			ErrRefused, r.Release, ModulePath, r.ModuleVersion(), r.ModuleSum, m.Error, way, r.ModuleVersion(), r.ModuleSum)
	}
	if m.Sum != r.ModuleSum {
		return "", fmt.Errorf("%w: %s@%s: the checksum database says %s, versions.yaml pins %s", ErrHashMismatch, ModulePath, r.ModuleVersion(), m.Sum, r.ModuleSum)
	}
	// The go command verified the zip when it downloaded it; hash it again
	// in case the module cache was damaged since.
	return m.Zip, Verify(m.Zip, r)
}

// Verify checks that the zip at path is a well-formed module zip whose h1:
// hash equals the release's pinned sum.
func Verify(path string, r *matrix.Release) error {
	got, err := dirhash.HashZip(path, dirhash.Hash1)
	if err != nil {
		return fmt.Errorf("hashing source zip %s: %w", path, err)
	}
	if got != r.ModuleSum {
		return fmt.Errorf("%w: %s hashes to %s, release %s pins %s; refusing it", ErrHashMismatch, path, got, r.Release, r.ModuleSum)
	}
	if _, err := modzip.CheckZip(module.Version{Path: ModulePath, Version: r.ModuleVersion()}, path); err != nil {
		return fmt.Errorf("source zip %s is not a valid module zip for %s@%s: %w", path, ModulePath, r.ModuleVersion(), err)
	}
	return nil
}

// Extract unpacks a verified zip into dir, which must not exist yet.
func Extract(zipPath, dir string, r *matrix.Release) error {
	if err := modzip.Unzip(dir, module.Version{Path: ModulePath, Version: r.ModuleVersion()}, zipPath); err != nil {
		return fmt.Errorf("extracting %s: %w", zipPath, err)
	}
	return nil
}

// crossVersion is where a release's tree names the Go toolchain of its
// official build image (kube-cross): "v1.10.8-1" (the Go release, then
// the image's revision) up to 1.20 ("v1.15.15-legacy-1" in 1.20.15: the
// image on its older base), "v1.21.0-go1.16.15-buster.0"
// (the Kubernetes minor's image, the Go release, the base and revision)
// from 1.21.
const crossVersion = "build/build-image/cross/VERSION"

var crossVersionREs = []*regexp.Regexp{
	regexp.MustCompile(`^v(1\.[0-9]+(?:\.[0-9]+)?)-(?:legacy-)?[0-9]+$`),
	regexp.MustCompile(`^v1\.[0-9]+\.[0-9]+-go(1\.[0-9]+(?:\.[0-9]+)?)-[a-z]+\.[0-9]+$`),
}

// OfficialGo reads the Go release the official binaries of the tree were
// built with from its kube-cross image version: "v1.10.8-1" -> "go1.10.8",
// "v1.15.15-legacy-1" -> "go1.15.15", "v1.21.0-go1.16.15-buster.0" -> "go1.16.15".
func OfficialGo(tree string) (string, error) {
	data, err := os.ReadFile(filepath.Join(tree, crossVersion))
	if err != nil {
		return "", err
	}
	version := strings.TrimSpace(string(data))
	for _, re := range crossVersionREs {
		if m := re.FindStringSubmatch(version); m != nil {
			return "go" + m[1], nil
		}
	}
	return "", fmt.Errorf("%s: %q is not a kube-cross version like v1.10.8-1, v1.15.15-legacy-1 or v1.21.0-go1.16.15-buster.0", crossVersion, version)
}
