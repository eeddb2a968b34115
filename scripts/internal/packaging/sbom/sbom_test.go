package sbom

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
	"kubelet-toolchain/scripts/internal/packaging/quilt"
)

func testInput(t *testing.T) Input {
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "staging", "src", "k8s.io", "client-go"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &matrix.Release{Release: "1.9.11", ModuleSum: "h1:PFbmFeh46oRlAFz2MvCEbTA3ur8GKTi+08ur4xtJB10=",
		BuildDate: time.Unix(1538170522, 0).UTC(), Era: matrix.EraGodeps, CGO: true, Go: "go1.26.8",
		Series: matrix.Series{Build: "k19-build", Fixes: "k19-fixes"}}
	return Input{
		Release: r, Variant: matrix.Patched, Version: "1.9.11+k19-fixes", BinarySHA256: strings.Repeat("ab", 32), Tree: tree, PatchDir: "patches",
		Modules: []Module{
			{Path: "github.com/google/cadvisor", Version: "v0.28.5", Sum: "h1:x", Roots: []string{"github.com/google/cadvisor"}},
			{Path: "github.com/Azure/go-autorest", Version: "v9.1.0+incompatible", Sum: "h1:y", Roots: []string{"github.com/Azure/go-autorest/autorest", "github.com/Azure/go-autorest/autorest/adal"}, Notes: []string{"substituted for Godeps revision abc: reason"}, Substituted: true},
		},
		Patches: []quilt.Patch{
			{Series: "k19-build", Name: "k19-build/0001-a.patch", Source: "patches/k19-build/0001-a.patch", Paths: []string{"vendor/github.com/google/cadvisor/container/docker/handler.go"}, Data: []byte("a")},
			{Series: "k19-fixes", Name: "k19-fixes/0001-b.patch", Source: "patches/k19-fixes/0001-b.patch", Paths: []string{"pkg/kubelet/container/helpers.go", "vendor/k8s.io/client-go/x.go"}, Data: []byte("b")},
			{Series: "k19-fixes", Name: "k19-fixes/0002-c.patch", Source: "overlay/k19-fixes/vendor/example.com/gone/x.go", Paths: []string{"vendor/example.com/gone/x.go"}, Overlay: true, Data: []byte("c")},
		},
	}
}

func TestGenerateValidates(t *testing.T) {
	in := testInput(t)
	doc, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	patched := PatchedModules(in.Patches, in.Modules, in.Tree)
	if strings.Join(patched, " ") != "github.com/google/cadvisor@v0.28.5 k8s.io/kubernetes" {
		t.Errorf("patched modules %v", patched)
	}
	sum, err := Validate(data, in.Modules, patched)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Packages != 5 || sum.Files != 3 {
		t.Errorf("summary %+v", sum)
	}
	for _, want := range []string{`"spdxVersion": "SPDX-2.3"`, "pkg:golang/github.com/Azure/go-autorest@v9.1.0%2Bincompatible", "PATCH_APPLIED", "substituted for Godeps revision abc", "whose module is not compiled into kubelet", `"created": "2018-09-28T21:35:22Z"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("document lacks %q", want)
		}
	}
	// Same input, same bytes.
	doc2, _ := Generate(in)
	data2, _ := Marshal(doc2)
	if !bytes.Equal(data, data2) {
		t.Error("document is not reproducible")
	}
}

func TestValidateCatchesOmissions(t *testing.T) {
	in := testInput(t)
	doc, _ := Generate(in)
	data, _ := Marshal(doc)
	extra := append(append([]Module(nil), in.Modules...), Module{Path: "example.com/missing", Version: "v1.0.0"})
	if _, err := Validate(data, extra, nil); err == nil || !strings.Contains(err.Error(), "example.com/missing@v1.0.0 is compiled in but not listed") {
		t.Errorf("missing module: %v", err)
	}
	if _, err := Validate(data, in.Modules, []string{"github.com/Azure/go-autorest@v9.1.0+incompatible"}); err == nil {
		t.Error("unpatched module reported as patched")
	}
	if _, err := Validate([]byte(`{"spdxVersion": "SPDX-2.3"}`), nil, nil); err == nil {
		t.Error("empty document validates")
	}
}

func TestModuleOf(t *testing.T) {
	in := testInput(t)
	for path, want := range map[string]string{
		"pkg/kubelet/kubelet.go":                                     KubernetesModule,
		"vendor/github.com/Azure/go-autorest/autorest/adal/token.go": "github.com/Azure/go-autorest@v9.1.0+incompatible",
		"vendor/github.com/google/cadvisor/fs/fs.go":                 "github.com/google/cadvisor@v0.28.5",
		"vendor/k8s.io/client-go/rest/client.go":                     KubernetesModule,
		"vendor/example.com/other/x.go":                              "",
	} {
		if got := ModuleOf(path, in.Modules, in.Tree); got != want {
			t.Errorf("ModuleOf(%s) = %q, want %q", path, got, want)
		}
	}
}
