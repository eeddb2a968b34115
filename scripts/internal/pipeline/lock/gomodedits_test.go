package lock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

const goMod = `module k8s.io/kubernetes

go 1.13

require (
	k8s.io/api v0.0.0
	k8s.io/sample-cli-plugin v0.0.0
	github.com/modern-go/reflect2 v1.0.1
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/sample-cli-plugin => ./staging/src/k8s.io/sample-cli-plugin
	github.com/modern-go/reflect2 => github.com/modern-go/reflect2 v1.0.1
	vbom.ml/util => vbom.ml/util v0.0.0-20160121211510-db5cfe13f5cc
)
`

func TestGoModEditsApply(t *testing.T) {
	tree := t.TempDir()
	os.WriteFile(filepath.Join(tree, "go.mod"), []byte(goMod), 0o644)
	e := &GoModEdits{
		StagingVersion: "v0.18.6",
		Drop:           []DroppedModule{{Path: "k8s.io/sample-cli-plugin", Reason: "sample"}},
		Replace: []Replacement{
			{Path: "vbom.ml/util", With: "github.com/fvbommel/util", Version: "v0.0.0-20160121211510-db5cfe13f5cc", Reason: "host gone"},
			{Path: "github.com/modern-go/reflect2", With: "github.com/modern-go/reflect2", Version: "v1.0.2", Reason: "crash"},
		},
	}
	if err := e.Apply(tree); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(tree, "go.mod"))
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	repl := map[string]string{}
	for _, r := range f.Replace {
		repl[r.Old.Path] = r.New.Path + "@" + r.New.Version
	}
	req := map[string]string{}
	for _, r := range f.Require {
		req[r.Mod.Path] = r.Mod.Version
	}
	for path, want := range map[string]string{
		"k8s.io/api":                    "k8s.io/api@v0.18.6",
		"vbom.ml/util":                  "github.com/fvbommel/util@v0.0.0-20160121211510-db5cfe13f5cc",
		"github.com/modern-go/reflect2": "github.com/modern-go/reflect2@v1.0.2",
	} {
		if repl[path] != want {
			t.Errorf("replace %s => %q, want %q", path, repl[path], want)
		}
	}
	if req["k8s.io/api"] != "v0.18.6" {
		t.Errorf("k8s.io/api still required at %q", req["k8s.io/api"])
	}
	if _, ok := req["k8s.io/sample-cli-plugin"]; ok || strings.Contains(string(data), "sample-cli-plugin") {
		t.Errorf("dropped module still in go.mod:\n%s", data)
	}
	if strings.Contains(string(data), "./staging") {
		t.Errorf("staging replacement left:\n%s", data)
	}
}
