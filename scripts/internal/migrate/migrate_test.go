package migrate

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/base/dockershim"
)

// A kubeadm 1.23 node on Debian: kubeadm's flags (its network plugin and
// pause image), the operator's in /etc/default/kubelet, the cgroup driver
// in the config file.
func debianNode(t *testing.T, extra string) Node {
	t.Helper()
	n := Node{Root: t.TempDir()}
	write(t, n, KubeadmFlagsFile, `KUBELET_KUBEADM_ARGS="--network-plugin=cni --pod-infra-container-image=k8s.gcr.io/pause:3.6"`+"\n")
	write(t, n, "/etc/default/kubelet", "# the operator's\nKUBELET_EXTRA_ARGS="+extra+"\n")
	write(t, n, KubeletConfigFile, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n")
	return n
}

func write(t *testing.T, n Node, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(n.path(p)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(n.path(p), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, n Node, p string) string {
	t.Helper()
	data, err := os.ReadFile(n.path(p))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSwitchCarriesEveryFlagWhereItBelongs(t *testing.T) {
	n := debianNode(t, "--node-ip=10.0.0.5 --cni-bin-dir=/opt/cni/bin,/usr/lib/cni")
	p, err := n.PlanSwitch("1.24.17", 24)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range p.Files {
		files[f.Path] = string(f.Data)
	}
	for path, want := range map[string]string{
		KubeadmFlagsFile: `KUBELET_KUBEADM_ARGS="--pod-infra-container-image=k8s.gcr.io/pause:3.6 --container-runtime=remote --container-runtime-endpoint=unix:///var/run/dockershim.sock"` + "\n",
		// The operator's other lines are kept.
		"/etc/default/kubelet": "# the operator's\nKUBELET_EXTRA_ARGS=\"--node-ip=10.0.0.5\"\n",
	} {
		if files[path] != want {
			t.Errorf("%s:\n%s\nwant\n%s", path, files[path], want)
		}
	}
	shim := files["/etc/default/dockershim"]
	for _, want := range []string{"--container-runtime-endpoint=unix:///var/run/dockershim.sock", "--network-plugin=cni",
		"--cni-bin-dir=/opt/cni/bin,/usr/lib/cni", "--pod-infra-container-image=k8s.gcr.io/pause:3.6", "--cgroup-driver=systemd"} {
		if !strings.Contains(shim, want+" ") && !strings.Contains(shim, want+`"`) {
			t.Errorf("the shim's flags lack %s:\n%s", want, shim)
		}
	}
	if !strings.Contains(files[ShimUnit], "EnvironmentFile=-/etc/default/dockershim") || !strings.Contains(files[KubeletDropIn], "After=dockershim.service") {
		t.Errorf("unit or drop-in:\n%s\n%s", files[ShimUnit], files[KubeletDropIn])
	}
}

// With the dockershim package installed, the plan configures its unit:
// the flags go to the file that unit reads (the RPM's /etc/sysconfig one
// here, on a node whose kubelet flags are Debian's), and no unit of the
// plan's own hides the package's.
func TestSwitchConfiguresThePackagedUnit(t *testing.T) {
	n := debianNode(t, "--node-ip=10.0.0.5")
	write(t, n, dockershim.PackagedUnits[1], dockershim.Unit("/etc/sysconfig/dockershim"))
	p, err := n.PlanSwitch("1.25.16", 25)
	if err != nil {
		t.Fatal(err)
	}
	if p.PackagedUnit != dockershim.PackagedUnits[1] {
		t.Errorf("the plan found the packaged unit %q, want %s", p.PackagedUnit, dockershim.PackagedUnits[1])
	}
	var paths []string
	for _, f := range p.Files {
		paths = append(paths, f.Path)
		if f.Path == "/etc/sysconfig/dockershim" && !strings.Contains(string(f.Data), "--network-plugin=cni") {
			t.Errorf("the shim's flags file:\n%s", f.Data)
		}
	}
	if slices.Contains(paths, ShimUnit) || !slices.Contains(paths, "/etc/sysconfig/dockershim") || slices.Contains(paths, "/etc/default/dockershim") {
		t.Errorf("the plan writes %v: want the packaged unit's flags file and no unit", paths)
	}
}

// Apply twice is applying once; Back puts the node back as it was.
func TestApplyTwiceThenBack(t *testing.T) {
	n := debianNode(t, "--node-ip=10.0.0.5")
	before := map[string]string{}
	for _, p := range []string{KubeadmFlagsFile, "/etc/default/kubelet"} {
		before[p] = read(t, n, p)
	}
	p, err := n.PlanSwitch("1.25.16", 25)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Apply(p); err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for _, f := range p.Files {
		first[f.Path] = read(t, n, f.Path)
	}
	again, err := n.PlanSwitch("1.25.16", 25)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replanned {
		t.Error("the second plan did not start from the backups")
	}
	if err := n.Apply(again); err != nil {
		t.Fatal(err)
	}
	for path, data := range first {
		if got := read(t, n, path); got != data {
			t.Errorf("%s changed on the second apply:\n%s\nwas\n%s", path, got, data)
		}
	}
	done, err := n.Back()
	if err != nil {
		t.Fatal(err)
	}
	for path, data := range before {
		if got := read(t, n, path); got != data {
			t.Errorf("%s not restored:\n%s\nwant\n%s", path, got, data)
		}
	}
	for _, p := range []string{ShimUnit, KubeletDropIn, "/etc/default/dockershim", BackupDir} {
		if _, err := os.Stat(n.path(p)); !os.IsNotExist(err) {
			t.Errorf("%s left after Back (%v): %v", p, err, done)
		}
	}
}

// A kubelet 1.23 serving its dockershim on a moved socket: the shim
// serves it there and the new kubelet dials it there.
func TestSwitchCarriesAMovedSocket(t *testing.T) {
	n := debianNode(t, "--container-runtime-endpoint=unix:///run/k/dockershim.sock --experimental-dockershim-root-directory=/var/lib/k/dockershim")
	p, err := n.PlanSwitch("1.24.17", 24)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Files {
		switch f.Path {
		case KubeadmFlagsFile:
			if !strings.Contains(string(f.Data), "--container-runtime=remote --container-runtime-endpoint=unix:///run/k/dockershim.sock\"") {
				t.Errorf("the kubelet does not dial the moved socket:\n%s", f.Data)
			}
		case "/etc/default/kubelet":
			if strings.Contains(string(f.Data), "dockershim") {
				t.Errorf("the kubelet keeps a dockershim flag:\n%s", f.Data)
			}
		case "/etc/default/dockershim":
			args, _ := ReadVar(f.Data, dockershim.FlagsVar)
			if !strings.HasPrefix(args, "--container-runtime-endpoint=unix:///run/k/dockershim.sock ") || strings.Count(args, "container-runtime-endpoint") != 1 ||
				!strings.Contains(args, "--experimental-dockershim-root-directory=/var/lib/k/dockershim") {
				t.Errorf("the shim does not serve the moved socket once, with its checkpoints: %s", args)
			}
		}
	}
}

// What cannot be carried over is named, all of it, and nothing is written.
func TestRefusesWhatItCannotCarry(t *testing.T) {
	for _, tc := range []struct{ extra, want string }{
		{"--docker-only=true --dynamic-config-dir=/var/lib/kubelet/dyn", "--docker-only: removed in 1.24"},
		{"--container-runtime=remote --container-runtime-endpoint=unix:///run/containerd/containerd.sock", "runs on another runtime, not a dockershim"},
		{"--container-runtime-endpoint=tcp://127.0.0.1:3735", "dockershim serves a unix socket"},
		{`--node-labels="a=b"`, "only --name=value flags"},
	} {
		n := debianNode(t, tc.extra)
		_, err := n.PlanSwitch("1.24.17", 24)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("KUBELET_EXTRA_ARGS=%s: %v, want an error naming %q", tc.extra, err, tc.want)
		}
		if _, err := os.Stat(n.path(BackupDir)); !os.IsNotExist(err) {
			t.Errorf("a refused plan wrote backups")
		}
	}
	// 1.25 removed one more.
	n := debianNode(t, "--experimental-kernel-memcg-notification=true")
	if _, err := n.PlanSwitch("1.24.17", 24); err != nil {
		t.Errorf("1.24 still has --experimental-kernel-memcg-notification: %v", err)
	}
	if _, err := n.PlanSwitch("1.25.16", 25); err == nil {
		t.Error("1.25 removed --experimental-kernel-memcg-notification: want a refusal")
	}
}

// Every flag handed to the shim is one cmd/dockershim (overlay
// dockershim) defines.
func TestShimTakesTheFlagsItIsGiven(t *testing.T) {
	src, err := os.ReadFile("../../../overlay/dockershim/cmd/dockershim/main.go")
	if err != nil {
		t.Fatal(err)
	}
	var defined []string
	for _, m := range regexp.MustCompile(`fs\.\w+Var\([^,]+, "([a-z-]+)"`).FindAllStringSubmatch(string(src), -1) {
		defined = append(defined, m[1])
	}
	for _, name := range append(append([]string{"container-runtime-endpoint"}, shimOnly...), shared...) {
		if !slices.Contains(defined, name) {
			t.Errorf("--%s goes to the shim, which does not define it (it defines %v)", name, defined)
		}
	}
}

// A shim on another network plugin than made the node's sandboxes reads
// no IP for them: each such pod is named; hostNetwork pods fit any plugin.
func TestNetworkMismatch(t *testing.T) {
	sbs := []Sandbox{{"ns/web", "none"}, {"kube-system/proxy", "host"}, {"ns/old", "default"}}
	for plugin, want := range map[string][]string{
		"cni":     {`ns/old: its sandbox was made under no network plugin (Docker's bridge) (network mode "default")`},
		"kubenet": {`ns/old: its sandbox was made under no network plugin (Docker's bridge) (network mode "default")`},
		"":        {`ns/web: its sandbox was made under a network plugin (cni or kubenet) (network mode "none")`},
	} {
		if got := NetworkMismatch(plugin, sbs); !slices.Equal(got, want) {
			t.Errorf("plugin %q: %q, want %q", plugin, got, want)
		}
	}
	if got := NetworkMismatch("cni", sbs[:2]); got != nil {
		t.Errorf("cni sandboxes under cni: %q", got)
	}
}
