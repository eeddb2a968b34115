package source

import (
	"slices"
	"strings"
	"testing"
)

// Excerpts of hack/lib/golang.sh in the forms the releases use.
const (
	golang17 = `readonly KUBE_STATIC_LIBRARIES=(
  cloud-controller-manager
  kube-apiserver
  kubectl
)
      CGO_ENABLED=0 go build -o "${outfile}" \
`
	golang112 = `readonly KUBE_STATIC_LIBRARIES=(
  kube-apiserver
  kubectl
)
IFS=" " read -ra KUBE_CGO_OVERRIDES <<< "${KUBE_CGO_OVERRIDES:-}"
        go test -c -o "$(kube::golang::outfile_for_binary "${package}" "${platform}")" \
          -tags coverage \
`
	// 1.20..1.23: both override lists, read into <name>_LIST.
	golang123 = `readonly KUBE_STATIC_LIBRARIES=(
  kube-apiserver
  kubectl
)
IFS=" " read -ra KUBE_CGO_OVERRIDES_LIST <<< "${KUBE_CGO_OVERRIDES:-}"
readonly KUBE_CGO_OVERRIDES_LIST
IFS=" " read -ra KUBE_STATIC_OVERRIDES_LIST <<< "${KUBE_STATIC_OVERRIDES:-}"
readonly KUBE_STATIC_OVERRIDES_LIST
    gotags="selinux,notest,$(echo "${GOFLAGS:-}" | sed -ne 's|.*-tags=\([^-]*\).*|\1|p')"
      -tags "${gotags:-}"
`
	golang118 = golang112 + `    gotags="selinux,$(echo "${GOFLAGS:-}" | sed -e 's|.*-tags=\([^-]*\).*|\1|')"
      -tags "${gotags:-}"
      -tags "${gotags:-}" \
`
)

func TestParseOfficialBuild(t *testing.T) {
	for _, tc := range []struct {
		name, sh   string
		tags       []string
		kubeletCGO bool
	}{
		{"1.7 (no overrides, no tags)", golang17, nil, true},
		{"1.12 (coverage tag only)", golang112, nil, true},
		{"1.18 (gotags)", golang118, []string{"selinux"}, true},
		{"1.20 (two tags)", strings.Replace(golang118, `"selinux,`, `"selinux,notest,`, 1), []string{"selinux", "notest"}, true},
		{"1.9 (static overrides from the environment only)", golang17 + `  if [ -n "${KUBE_STATIC_OVERRIDES:+x}" ]; then
    for e in "${KUBE_STATIC_OVERRIDES[@]}"; do [[ "$1" == *"/$e" ]] && return 0; done;
`, nil, true},
		{"1.23 (override lists)", golang123, []string{"selinux", "notest"}, true},
		{"1.23, kubelet in the static overrides' default", strings.Replace(golang123, "KUBE_STATIC_OVERRIDES:-}", "KUBE_STATIC_OVERRIDES:-kubelet}", 1), []string{"selinux", "notest"}, false},
		{"kubelet static", strings.Replace(golang112, "  kubectl\n", "  kubectl\n  kubelet\n", 1), nil, false},
		{"kubelet static but overridden", strings.Replace(strings.Replace(golang112, "  kubectl\n", "  kubectl\n  kubelet\n", 1), `KUBE_CGO_OVERRIDES:-}`, `KUBE_CGO_OVERRIDES:-kubelet}`, 1), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := parseOfficialBuild(tc.sh)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(b.Tags, tc.tags) {
				t.Errorf("tags %q, want %q", b.Tags, tc.tags)
			}
			if b.CGO("kubelet") != tc.kubeletCGO {
				t.Errorf("kubelet cgo %v, want %v", b.CGO("kubelet"), tc.kubeletCGO)
			}
			if b.CGO("kube-apiserver") {
				t.Error("kube-apiserver is in KUBE_STATIC_LIBRARIES")
			}
		})
	}
}

func TestParseOfficialBuildRefuses(t *testing.T) {
	for _, tc := range []struct{ name, sh, want string }{
		{"no static list", "gotags=\n", "KUBE_STATIC_LIBRARIES"},
		{"unknown tags form", golang17 + "  go build -tags providerless\n", "providerless"},
		{"gotags unset", golang17 + `  -tags "${gotags:-}"` + "\n", "sets gotags 0 times"},
		{"unknown overrides form", golang17 + "KUBE_CGO_OVERRIDES=(kubectl)\n", "KUBE_CGO_OVERRIDES"},
		{"unknown static overrides form", golang17 + "KUBE_STATIC_OVERRIDES=(kubelet)\n", "KUBE_STATIC_OVERRIDES"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseOfficialBuild(tc.sh)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), golangSh) {
				t.Fatalf("error %v, want one naming %s and %q", err, golangSh, tc.want)
			}
		})
	}
}
