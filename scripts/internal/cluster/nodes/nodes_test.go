package nodes

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestKubeletArgs(t *testing.T) {
	o := KubeletOptions{NodeName: "n1", NodeIP: "198.18.202.2", Kubeconfig: "/etc/kubernetes/node/kubeconfig",
		ClientCAFile: "/etc/kubernetes/node/ca.crt", AllowSwap: true, Extra: []string{"--cluster-dns=10.96.0.10"}}
	a17, err := KubeletArgs("1.7.5", o)
	if err != nil {
		t.Fatal(err)
	}
	a19, err := KubeletArgs("1.9.11", o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--kubeconfig=/etc/kubernetes/node/kubeconfig", "--hostname-override=n1",
		"--node-ip=198.18.202.2", "--cgroup-driver=cgroupfs", "--network-plugin=cni", "--cni-bin-dir=/opt/cni/bin",
		"--cni-conf-dir=/etc/cni/net.d", "--pod-manifest-path=/etc/kubernetes/manifests", "--allow-privileged=true",
		"--pod-infra-container-image=" + DefaultPauseImage, "--client-ca-file=/etc/kubernetes/node/ca.crt", "--v=2"} {
		if !slices.Contains(a17, want) || !slices.Contains(a19, want) {
			t.Errorf("%s missing: 1.7 %v\n1.9 %v", want, a17, a19)
		}
	}
	// 1.7 needs --require-kubeconfig and has no --fail-swap-on.
	if !slices.Contains(a17, "--require-kubeconfig=true") || slices.Contains(a19, "--require-kubeconfig=true") {
		t.Errorf("--require-kubeconfig: 1.7 %v\n1.9 %v", a17, a19)
	}
	if slices.ContainsFunc(a17, func(s string) bool { return strings.HasPrefix(s, "--fail-swap-on") }) {
		t.Errorf("1.7 got --fail-swap-on: %v", a17)
	}
	if !slices.Contains(a19, "--fail-swap-on=false") {
		t.Errorf("1.9 with swap lacks --fail-swap-on=false: %v", a19)
	}
	// 1.24 has no dockershim inside: no network plugin flags (fatal
	// there), the shim's socket instead.
	a124, err := KubeletArgs("1.24.17", o)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(a124, func(s string) bool { return strings.HasPrefix(s, "--network-plugin") || strings.HasPrefix(s, "--cni-") }) ||
		!slices.Contains(a124, "--container-runtime-endpoint=unix:///var/run/dockershim.sock") || !slices.Contains(a124, "--container-runtime=remote") {
		t.Errorf("1.24's runtime flags: %v", a124)
	}
	// ... and the shim has the network plugin 1.23's kubelet had, the
	// sandbox image and engine it is given.
	a123, _ := KubeletArgs("1.23.17", o)
	shim := ShimArgs("pause:3.6", "unix:///f.sock")
	for _, want := range append(slices.DeleteFunc(slices.Clone(a123), func(s string) bool {
		return !strings.HasPrefix(s, "--network-plugin") && !strings.HasPrefix(s, "--cni-") && !strings.HasPrefix(s, "--cgroup-driver")
	}), "--pod-infra-container-image=pause:3.6", "--docker-endpoint=unix:///f.sock", "--container-runtime-endpoint=unix:///var/run/dockershim.sock") {
		if !slices.Contains(shim, want) {
			t.Errorf("shim lacks %s: %v", want, shim)
		}
	}
	if slices.ContainsFunc(ShimArgs("p", ""), func(s string) bool { return strings.HasPrefix(s, "--docker-endpoint") }) {
		t.Errorf("shim on the node's engine got a --docker-endpoint: %v", ShimArgs("p", ""))
	}
	if a19[len(a19)-1] != "--cluster-dns=10.96.0.10" {
		t.Errorf("extra flags not last: %v", a19)
	}
	// Locked down: no anonymous requests, no read-only or cAdvisor port,
	// the API server authorizes (1.12 has no --cadvisor-port any more).
	for _, a := range [][]string{a17, a19} {
		for _, want := range []string{"--anonymous-auth=false", "--read-only-port=0", "--cadvisor-port=0", "--authorization-mode=Webhook"} {
			if !slices.Contains(a, want) {
				t.Errorf("%s missing: %v", want, a)
			}
		}
	}
	if a112, _ := KubeletArgs("1.12.10", o); slices.Contains(a112, "--cadvisor-port=0") {
		t.Errorf("1.12 got --cadvisor-port: %v", a112)
	}
	// Standalone: no kubeconfig flags, and nothing to ask for authorization.
	s, err := KubeletArgs("1.7.5", KubeletOptions{NodeName: "n1", ClientCAFile: "/ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s {
		if strings.Contains(a, "kubeconfig") || strings.HasPrefix(a, "--node-ip") || strings.HasPrefix(a, "--authorization-mode") {
			t.Errorf("standalone got %s", a)
		}
	}
	if _, err := KubeletArgs("1.9.11", KubeletOptions{NodeName: "n1"}); err == nil || !strings.Contains(err.Error(), "client CA") {
		t.Errorf("no client CA: want an error naming it, got %v", err)
	}
	for _, bad := range []string{"", "2.0.0", "1.x", "17"} {
		if _, err := KubeletArgs(bad, o); err == nil {
			t.Errorf("release %q: want error", bad)
		}
	}
}

func TestCNIConfig(t *testing.T) {
	var c struct {
		CNIVersion string `json:"cniVersion"`
		Plugins    []struct {
			Type string `json:"type"`
			IPAM struct {
				Subnet string `json:"subnet"`
			} `json:"ipam"`
			Capabilities map[string]bool `json:"capabilities"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(CNIConfig("10.244.3.0/24"), &c); err != nil {
		t.Fatal(err)
	}
	if c.CNIVersion != "0.3.1" || len(c.Plugins) != 2 || c.Plugins[0].Type != "bridge" ||
		c.Plugins[0].IPAM.Subnet != "10.244.3.0/24" || c.Plugins[1].Type != "portmap" || !c.Plugins[1].Capabilities["portMappings"] {
		t.Errorf("unexpected config %+v", c)
	}
}

func TestParseRun(t *testing.T) {
	n := &Node{Spec: Spec{Name: "a"}, cluster: &Cluster{WorkDir: "/w"}}
	r, err := n.parseRun("noise\nold=12 pid=34 log=/var/log/node/kubelet-02-1.9.11-patched.log\n")
	if err != nil || r.OldPID != 12 || r.PID != 34 || r.Log != "/w/logs/a/kubelet-02-1.9.11-patched.log" {
		t.Errorf("got %+v, %v", r, err)
	}
	for _, bad := range []string{"", "pid=x old=1 log=/var/log/node/k", "old=1 pid=2 log=/etc/passwd"} {
		if _, err := n.parseRun(bad); err == nil {
			t.Errorf("%q: want error", bad)
		}
	}
}
