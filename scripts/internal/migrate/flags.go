// Package migrate moves a kubeadm node's kubelet off the dockershim inside
// kubelet 1.23 onto 1.23.17's dockershim served on its own (make
// dockershim), for a kubelet of 1.24 or 1.25: which flag goes where
// (flags.go), the node's files read and written with backups and the way
// back (node.go). Modelled on kubeadm upgrade plan/apply: a plan first, a
// dry run that prints every file, steps that can run twice.
package migrate

import (
	"fmt"
	"slices"
	"strings"

	"kubelet-toolchain/scripts/internal/base/dockershim"
	"kubelet-toolchain/scripts/internal/base/matrix"
)

// Where a kubelet 1.23 flag goes when the node leaves dockershim.
type Where string

const (
	Kubelet Where = "kubelet"         // the new kubelet keeps it
	Shim    Where = "dockershim"      // dockershim's own setting: the shim takes it, 1.24's kubelet refuses it
	Both    Where = "kubelet+shim"    // both need it (the shim to behave as 1.23's dockershim did)
	Dropped Where = "replaced"        // --container-runtime(-endpoint): the new runtime flags replace it
	Refused Where = "cannot carry it" // removed with no successor: the operator decides
)

// shimOnly are dockershim's settings, which 1.24 removed from the kubelet
// (kubernetes#106907; an unknown flag is fatal there).
var shimOnly = []string{"network-plugin", "cni-conf-dir", "cni-bin-dir", "cni-cache-dir", "network-plugin-mtu",
	"docker-endpoint", "image-pull-progress-deadline", "experimental-dockershim-root-directory", "non-masquerade-cidr"}

// shared are settings 1.23's kubelet gave its dockershim that the newer
// kubelet keeps too (the pod infra image: the shim's decides the
// sandbox image, the kubelet's keeps it from image GC).
var shared = []string{"pod-infra-container-image", "cgroup-driver", "hairpin-mode", "runtime-cgroups",
	"runtime-request-timeout", "streaming-connection-idle-timeout"}

// removed are kubelet flags each minor removed with nothing to carry them
// to (the cadvisor Docker flags went with the Docker factory).
var removed = map[int][]string{
	24: {"docker", "docker-root", "docker-env-metadata-whitelist", "docker-only", "docker-tls", "docker-tls-ca",
		"docker-tls-cert", "docker-tls-key", "dynamic-config-dir", "experimental-check-node-capabilities-before-mount",
		"really-crash-for-testing", "experimental-logging-sanitization"},
	25: {"experimental-kernel-memcg-notification"},
}

// Flag is one --name[=value] of a kubelet command line.
type Flag struct {
	Name, Value string
	HasValue    bool
}

func (f Flag) String() string {
	if !f.HasValue {
		return "--" + f.Name
	}
	return "--" + f.Name + "=" + f.Value
}

// ParseFlags splits a flags variable (kubeadm-flags.env's
// KUBELET_KUBEADM_ARGS, KUBELET_EXTRA_ARGS) into flags. Only --name=value
// and bare --name are read: a value with quotes or a separate word is
// refused, naming it, rather than guessed at.
func ParseFlags(s string) ([]Flag, error) {
	var out []Flag
	for _, w := range strings.Fields(s) {
		if !strings.HasPrefix(w, "--") || strings.ContainsAny(w, `"'\`) {
			return nil, fmt.Errorf("%q: only --name=value flags are carried over (write it so, or move it by hand)", w)
		}
		name, value, ok := strings.Cut(w[2:], "=")
		out = append(out, Flag{Name: name, Value: value, HasValue: ok})
	}
	return out, nil
}

// Join renders flags as a flags variable's value.
func Join(fs []Flag) string {
	var ws []string
	for _, f := range fs {
		ws = append(ws, f.String())
	}
	return strings.Join(ws, " ")
}

// Classify says where f goes on a node switching to a kubelet of minor
// to (24 or 25); Refused and Dropped come with the reason.
func Classify(f Flag, to int) (Where, string) {
	switch {
	case f.Name == "container-runtime":
		if f.Value != "docker" && f.Value != "remote" {
			return Refused, fmt.Sprintf("--container-runtime=%s: not a dockershim node", f.Value)
		}
		return Dropped, "the kubelet talks CRI to the shim (--container-runtime=remote)"
	case f.Name == "container-runtime-endpoint":
		if !strings.HasPrefix(f.Value, "unix:///") {
			return Refused, fmt.Sprintf("--container-runtime-endpoint=%s: dockershim serves a unix socket (unix:///path)", f.Value)
		}
		if f.Value != dockershim.Endpoint {
			// 1.23's kubelet serves its dockershim wherever this says; so
			// does the shim (PlanSwitch refuses it for another runtime).
			return Dropped, "a moved socket: the shim serves it there, the kubelet dials it there"
		}
		return Dropped, "the shim serves it, the kubelet dials it"
	case slices.Contains(shimOnly, f.Name):
		return Shim, ""
	case slices.Contains(shared, f.Name):
		return Both, ""
	}
	for minor := matrix.ShimFrom; minor <= to; minor++ {
		if slices.Contains(removed[minor], f.Name) {
			return Refused, fmt.Sprintf("--%s: removed in 1.%d with no successor (take it out, then run again)", f.Name, minor)
		}
	}
	return Kubelet, ""
}
