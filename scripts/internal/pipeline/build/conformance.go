package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"kubelet-toolchain/scripts/internal/base/fsutil"
	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/tools/execx"
)

// ConformanceTargetName is the node conformance suite's directory under
// _output/<release>/ and its name in progress lines.
const ConformanceTargetName = "conformance"

// ConformancePathsFor returns the suite's layout under an output dir:
// _output/<release>/conformance/bin/e2e_node.test.
func ConformancePathsFor(output, release string) Paths {
	return targetPaths(output, release, ConformanceTargetName, "bin")
}

// ConformanceSupported fails unless r names a conformance series.
func ConformanceSupported(m *matrix.Matrix, r *matrix.Release) error {
	if r.Series.Conformance == "" {
		var have []string
		for _, other := range m.Releases {
			if other.Series.Conformance != "" {
				have = append(have, other.Release)
			}
		}
		return fmt.Errorf("release %s: no node conformance build: e2e_node.test is built for %s only (the releases whose versions.yaml entry names a series.conformance)",
			r.Release, strings.Join(have, ", "))
	}
	return ControlPlaneSupported(m, r)
}

// ConformanceTarget is upstream's node conformance suite, one test binary
// built from the control plane's tree (it starts its own kube-apiserver,
// so it needs the generated OpenAPI) plus the conformance series, with the
// e2e manifests and test images' sources generated into it as
// hack/generate-bindata.sh does. Like upstream's e2e_node.test it links
// cgo; it is stamped v<release>+<conformance series>.
func ConformanceTarget(ctx context.Context, o Options) *Target {
	o = o.withDefaults()
	r := o.Release
	p := ConformancePathsFor(o.OutputDir, r.Release)
	args, env := compileCommand(r, versionVars(r, r.ConformanceGitVersion()), nil, r.CGO, p)
	args = append([]string{"test", "-c", "-vet=off"}, args[1:]...) // args[0] is "build"
	return &Target{
		Name:   ConformanceTargetName,
		Series: r.Series.ForConformance(),
		Generate: []Step{
			{"generate-godebug", func(tree string) error { return godebugTestFile(tree, suitePackage) }},
			openAPIStep(ctx, o),
			bindataStep(ctx, o),
		},
		Paths:    p,
		SumsFile: "SHA256SUMS",
		Outputs:  []Output{{Name: "e2e_node.test", GoArgs: args, Package: goPackage(r, suitePackage), Dir: goDir(r, p), Env: env}},
	}
}

// Conformance builds the release's e2e_node.test.
func Conformance(ctx context.Context, o Options) (*Result, error) {
	if err := ConformanceSupported(o.Matrix, o.Release); err != nil {
		return nil, err
	}
	return Run(ctx, o, ConformanceTarget(ctx, o))
}

// suitePackage is the node e2e suite, relative to the tree.
const suitePackage = "test/e2e_node"

// godebugTestFile lays the kubelet's GODEBUG defaults into a package's
// test files: //go:debug lines in a _test.go file set the test binary's
// defaults as they set a command's in its main package.
func godebugTestFile(tree, pkg string) error {
	data, err := os.ReadFile(filepath.Join(tree, godebugFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no defaults series: CheckGODEBUG refuses the binary
	} else if err != nil {
		return err
	}
	dir := filepath.Join(tree, pkg)
	name, err := packageName(dir)
	if err != nil {
		return err
	}
	data = bytes.Replace(data, []byte("\npackage main\n"), []byte("\npackage "+name+"\n"), 1)
	return os.WriteFile(filepath.Join(dir, "zz_godebug_test.go"), data, 0o644)
}

// packageName reads the package clause of a directory's first test file.
func packageName(dir string) (string, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if name, ok := strings.CutPrefix(line, "package "); ok {
				return strings.TrimSpace(name), nil
			}
		}
	}
	return "", fmt.Errorf("no test file with a package clause in %s", dir)
}

// bindataStep generates test/e2e/generated/bindata.go as
// hack/generate-bindata.sh does: the tree's own go-bindata over the
// example, testing-manifest, test-image and fixture files, then gofmt -s.
// (pkg/generated/bindata.go, its translations, ships in the module zip.)
func bindataStep(ctx context.Context, o Options) Step {
	return Step{"generate-bindata", func(tree string) error {
		gopath := filepath.Dir(filepath.Dir(filepath.Dir(tree)))
		scratch, err := os.MkdirTemp("", "go-bindata-")
		if err != nil {
			return err
		}
		defer fsutil.RemoveAll(scratch)
		gen, env, err := buildTreeTool(ctx, o.Release, gopath, "k8s.io/kubernetes/vendor/github.com/jteeuwen/go-bindata/go-bindata", scratch)
		if err != nil {
			return err
		}
		const out = "test/e2e/generated/bindata.go"
		if _, err := execx.Run(ctx, execx.Cmd{Name: gen, Args: []string{"-nometadata", "-o", out, "-pkg", "generated",
			"-ignore", ".jpg", "-ignore", ".png", "-ignore", ".md",
			"examples/...", "test/e2e/testing-manifests/...", "test/images/...", "test/fixtures/..."}, Dir: tree, Env: env}); err != nil {
			return fmt.Errorf("go-bindata: %w", err)
		}
		if _, err := execx.Run(ctx, execx.Cmd{Name: "gofmt", Args: []string{"-s", "-w", out}, Dir: tree, Env: env}); err != nil {
			return fmt.Errorf("gofmt %s: %w", out, err)
		}
		fi, err := os.Stat(filepath.Join(tree, out))
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Log, "    generated %s (%d kB)\n", out, fi.Size()/1000)
		return nil
	}}
}
