package godeps

import (
	"strings"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/docker/docker/pkg/mount":              "github.com/docker/docker",
		"github.com/docker/docker":                        "github.com/docker/docker",
		"golang.org/x/net/http2/hpack":                    "golang.org/x/net",
		"gopkg.in/yaml.v2":                                "gopkg.in/yaml.v2",
		"gopkg.in/square/go-jose.v2/cipher":               "gopkg.in/square/go-jose.v2",
		"gopkg.in/inf.v0":                                 "gopkg.in/inf.v0",
		"google.golang.org/grpc/credentials":              "google.golang.org/grpc",
		"cloud.google.com/go/compute/metadata":            "cloud.google.com/go",
		"k8s.io/gengo/examples/set-gen/sets":              "k8s.io/gengo",
		"bitbucket.org/ww/goautoneg":                      "bitbucket.org/ww/goautoneg",
		"vbom.ml/util/sortorder":                          "vbom.ml/util",
		"go4.org/errorutil":                               "go4.org",
		"github.com/Azure/azure-sdk-for-go/arm/compute":   "github.com/Azure/azure-sdk-for-go",
		"github.com/google/cadvisor/container/containerd": "github.com/google/cadvisor",
	} {
		got, err := RepoRoot(in)
		if err != nil || got != want {
			t.Errorf("RepoRoot(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"example.org/foo/bar", "gopkg.in/noversion", "github.com/onlyowner"} {
		if got, err := RepoRoot(bad); err == nil {
			t.Errorf("RepoRoot(%q) = %q, want an error", bad, got)
		}
	}
}

func TestReposGroupsByRoot(t *testing.T) {
	f := &File{ImportPath: "k8s.io/kubernetes", Deps: []Dep{
		{ImportPath: "github.com/docker/docker/pkg/mount", Rev: "aaa"},
		{ImportPath: "github.com/docker/docker/api", Rev: "aaa"},
		{ImportPath: "gopkg.in/yaml.v2", Rev: "bbb"},
	}}
	repos, err := f.Repos()
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 2 || repos[0].Root != "github.com/docker/docker" || strings.Join(repos[0].Packages, ",") != "api,pkg/mount" || repos[1].Packages[0] != "." {
		t.Fatalf("got %+v", repos)
	}
	f.Deps = append(f.Deps, Dep{ImportPath: "github.com/docker/docker/client", Rev: "ccc"})
	if _, err := f.Repos(); err == nil || !strings.Contains(err.Error(), "two revisions") {
		t.Fatalf("two revisions of one root accepted: %v", err)
	}
}
