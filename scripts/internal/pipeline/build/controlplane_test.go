package build

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

func TestParseVersionOutput(t *testing.T) {
	raw := []byte(`version.Info{Major:"1", Minor:"9", GitVersion:"v1.9.11+k19-control-plane", GitCommit:"1bfeeb6f212135a22dc787b73e1980e5bccef13d", GitTreeState:"archive", BuildDate:"2018-09-28T21:35:22Z", GoVersion:"go1.26.8", Compiler:"gc", Platform:"linux/amd64"}` + "\n")
	v, c, err := ParseVersionOutput("kube-apiserver", raw)
	if err != nil || v != "v1.9.11+k19-control-plane" || c != "1bfeeb6f212135a22dc787b73e1980e5bccef13d" {
		t.Errorf("raw: %q %q %v", v, c, err)
	}
	js := []byte(`{"clientVersion": {"major": "1", "minor": "9", "gitVersion": "v1.9.11+k19-control-plane", "gitCommit": "1bfeeb6f212135a22dc787b73e1980e5bccef13d"}}`)
	v, c, err = ParseVersionOutput("kubectl", js)
	if err != nil || v != "v1.9.11+k19-control-plane" || c != "1bfeeb6f212135a22dc787b73e1980e5bccef13d" {
		t.Errorf("json: %q %q %v", v, c, err)
	}
	// Plain --version output names no commit: refused, not passed.
	if _, _, err := ParseVersionOutput("kube-apiserver", []byte("Kubernetes v1.9.11\n")); err == nil {
		t.Error("plain --version output accepted")
	}
	if _, _, err := ParseVersionOutput("kubectl", []byte(`{"serverVersion": {}}`)); err == nil {
		t.Error("kubectl output without clientVersion accepted")
	}
}

// OpenAPIDirs selects packages as build/root/Makefile.generated_files
// does: a `// +k8s:` tag line and the openapi-gen tag, outside the pruned
// directories, plus the staging repositories through vendor/ symlinks.
func TestOpenAPIDirs(t *testing.T) {
	// Each tree's hack/make-rules/helpers/cache_go_dirs.sh decides which
	// staging repositories are searched: 1.9's names its roots, 1.13's
	// walks all of staging.
	scripts := map[string]string{
		"listed roots (1.9)": "function kfind() {\n    find -H . ./vendor/k8s.io/api \\\n        -path ./vendor -o -path ./staging -o -path ./docs \\\n}\n",
		"all staging (1.13)": "function kfind() {\n    find -H . \\\n        -path ./vendor -o -path ./docs \\\n        | sed 's|^./staging/src|vendor|'\n}\n",
		// The modules era's zip has no staging/: the lock names the staging
		// repositories, vendored as real directories, and the Makefile
		// leaves sample-apiserver out of kube-apiserver's definitions.
		"modules era (1.18)": "function kfind() {\n    find -H . \\\n        -path ./vendor -o -path ./docs \\\n        | sed 's|^./staging/src|vendor|'\n}\n",
	}
	wants := map[string][]string{
		"listed roots (1.9)": {"pkg/apis/a", "pkg/apis/b", "vendor/k8s.io/api/core/v1"},
		"all staging (1.13)": {"pkg/apis/a", "pkg/apis/b", "vendor/k8s.io/api/core/v1", "vendor/k8s.io/unlisted/x"},
		"modules era (1.18)": {"pkg/apis/a", "pkg/apis/b", "vendor/k8s.io/api/core/v1"},
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			tree := t.TempDir()
			write := func(rel, content string) {
				p := filepath.Join(tree, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("hack/make-rules/helpers/cache_go_dirs.sh", script)
			tagged := "// +k8s:openapi-gen=true\n\npackage x\n"
			write("pkg/apis/a/doc.go", tagged)
			write("pkg/apis/b/types.go", "// +k8s:deepcopy-gen=package\n\npackage b\n\n// +k8s:openapi-gen=false\ntype T struct{}\n")
			write("pkg/apis/c/doc.go", "package c\n\n// mentions +k8s:openapi-gen= in prose only\n")
			write("pkg/apis/d/README.md", tagged)
			write("examples/e/doc.go", tagged)
			write("docs/f/doc.go", tagged)
			write("_output/g/doc.go", tagged)
			write(".hidden/h/doc.go", tagged)
			write("vendor/github.com/other/doc.go", tagged)
			var staging []string
			if name == "modules era (1.18)" {
				staging = []string{"api", "sample-apiserver"}
				write("vendor/k8s.io/api/core/v1/doc.go", tagged)
				write("vendor/k8s.io/sample-apiserver/pkg/apis/wardle/doc.go", tagged)
				write("vendor/k8s.io/kube-openapi/pkg/x/doc.go", tagged) // not a staging repository
				write("build/root/Makefile.generated_files", "KUBE_OPENAPI_TAG_FILES :=            $(filter-out vendor/k8s.io/code-generator/% vendor/k8s.io/sample-apiserver/%, $(ALL_K8S_TAG_FILES))\n")
			} else {
				write("staging/src/k8s.io/api/core/v1/doc.go", tagged)
				write("staging/src/k8s.io/unlisted/x/doc.go", tagged)
				if err := os.MkdirAll(filepath.Join(tree, "vendor/k8s.io"), 0o755); err != nil {
					t.Fatal(err)
				}
				for _, n := range []string{"api", "unlisted"} {
					if err := os.Symlink("../../staging/src/k8s.io/"+n, filepath.Join(tree, "vendor/k8s.io", n)); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, err := OpenAPIDirs(tree, staging)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, wants[name]) {
				t.Errorf("OpenAPIDirs = %v, want %v", got, wants[name])
			}
		})
	}
}

func TestControlPlaneCommandsAreMainPackages(t *testing.T) {
	for release, scheduler := range map[string]string{"1.9.11": "plugin/cmd/kube-scheduler", "1.13.12": "cmd/kube-scheduler", "1.23.17": "cmd/kube-scheduler"} {
		seen := map[string]string{}
		for _, c := range ControlPlaneCommands(&matrix.Release{Release: release}) {
			if seen[c.Name] != "" || strings.HasPrefix(c.Package, "/") || !strings.Contains(c.Package, "cmd/") {
				t.Errorf("%s: bad command %+v", release, c)
			}
			seen[c.Name] = c.Package
		}
		for _, n := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kube-proxy"} {
			if seen[n] == "" {
				t.Errorf("%s: %s is not built", release, n)
			}
		}
		if seen["kube-scheduler"] != scheduler {
			t.Errorf("%s: kube-scheduler from %s, want %s", release, seen["kube-scheduler"], scheduler)
		}
	}
}
