/*
Copyright 2026 The Kubelet Toolchain Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"k8s.io/kubernetes/cmd/kubelet/app/options"
)

// runDockershimFlags are the kubelet flags whose values 1.23's
// runDockershim (pkg/kubelet/kubelet_dockershim.go) and getStreamingConfig
// hand to the dockershim: the shim must take every one.
var runDockershimFlags = []string{
	"container-runtime-endpoint", "runtime-cgroups", "experimental-dockershim-root-directory",
	"pod-infra-container-image", "docker-endpoint", "image-pull-progress-deadline",
	"network-plugin", "cni-conf-dir", "cni-bin-dir", "cni-cache-dir", "network-plugin-mtu",
	"non-masquerade-cidr", "hairpin-mode", "cgroup-driver", "runtime-request-timeout",
	"streaming-connection-idle-timeout",
}

// An operator moves these flags from the kubelet's command line to the
// shim's as they are: each must mean the same, under the same name, type
// and default, as in this tree's kubelet.
func TestFlagsAreTheKubelets(t *testing.T) {
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		t.Fatal(err)
	}
	shim := newFlagSet(options.NewKubeletFlags(), kc)

	kubelet := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	options.NewKubeletFlags().AddFlags(kubelet)
	kkc, err := options.NewKubeletConfiguration()
	if err != nil {
		t.Fatal(err)
	}
	options.AddKubeletConfigFlags(kubelet, kkc)

	seen := 0
	shim.VisitAll(func(f *pflag.Flag) {
		seen++
		k := kubelet.Lookup(f.Name)
		if k == nil {
			t.Errorf("--%s: the kubelet has no such flag", f.Name)
			return
		}
		if k.Value.Type() != f.Value.Type() || k.DefValue != f.DefValue {
			t.Errorf("--%s: %s defaulting to %q, the kubelet's is %s defaulting to %q", f.Name, f.Value.Type(), f.DefValue, k.Value.Type(), k.DefValue)
		}
	})
	for _, name := range runDockershimFlags {
		if shim.Lookup(name) == nil {
			t.Errorf("--%s: runDockershim reads it from the kubelet, the shim does not take it", name)
		}
	}
	if seen != len(runDockershimFlags) {
		t.Errorf("the shim takes %d flags, runDockershim reads %d", seen, len(runDockershimFlags))
	}
}

// What the shim refuses before it touches docker.
func TestRunRefusesBadSettings(t *testing.T) {
	for flag, value := range map[string]string{"--cgroup-driver": "cgroupsv3", "--hairpin-mode": "promiscuous"} {
		kf := options.NewKubeletFlags()
		kc, err := options.NewKubeletConfiguration()
		if err != nil {
			t.Fatal(err)
		}
		// A docker endpoint nothing listens on (reaching docker would
		// fail too, but later and differently), and the test's own
		// directory for what the shim would make: never the machine's.
		dir := t.TempDir()
		if err := newFlagSet(kf, kc).Parse([]string{flag + "=" + value, "--docker-endpoint=unix://" + dir + "/docker.sock",
			"--experimental-dockershim-root-directory=" + dir + "/dockershim", "--container-runtime-endpoint=unix://" + dir + "/dockershim.sock"}); err != nil {
			t.Fatal(err)
		}
		if err := run(kf, kc); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s=%s: run returned %v, want an error naming the flag", flag, value, err)
		}
	}
}

// //go:debug lines count only in a main package, so the shim carries its
// own copy of the defaults series' file: it must stay the kubelet's.
func TestGodebugIsTheKubelets(t *testing.T) {
	shim, err := os.ReadFile("zz_godebug.go")
	if err != nil {
		t.Fatal(err)
	}
	kubelet, err := os.ReadFile("../kubelet/zz_godebug.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shim, kubelet) {
		t.Fatal("cmd/dockershim/zz_godebug.go differs from cmd/kubelet/zz_godebug.go (series.defaults): copy it into overlay/dockershim")
	}
}
