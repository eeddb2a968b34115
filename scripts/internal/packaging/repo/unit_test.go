package repo

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, data := range files {
		f := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// kubeadm's drop-in replaces the unit's ExecStart and reads its
// environment files; a same-named drop-in in /etc hides one in /lib, and a
// missing optional file is no error.
func TestExecStart(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"lib/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=-/etc/default/kubelet\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS\nRestart=always\n",
		"etc/systemd/system/kubelet.service.d/10-kubeadm.conf": `[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# a comment
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
EnvironmentFile=-/etc/default/kubelet
EnvironmentFile=-/etc/missing
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
`,
		"lib/systemd/system/kubelet.service.d/10-kubeadm.conf": "[Service]\nExecStart=\nExecStart=/bin/false\n",
		"lib/systemd/system/kubelet.service.d/20-extra.conf":   "[Service]\nEnvironment=\"KUBELET_EXTRA_ARGS=--v=9\"\n",
		"var/lib/kubelet/kubeadm-flags.env":                    "KUBELET_KUBEADM_ARGS=--cgroup-driver=cgroupfs --network-plugin=cni\n",
		"etc/default/kubelet":                                  "# the operator's\nKUBELET_EXTRA_ARGS=\"--node-labels=a=b --v=4\"\n",
	})
	argv, files, err := execStart(root, "kubelet.service")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/kubelet", "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config=/var/lib/kubelet/config.yaml", "--cgroup-driver=cgroupfs", "--network-plugin=cni", "--node-labels=a=b", "--v=4"}
	if !slices.Equal(argv, want) {
		t.Errorf("argv\n%q\nwant\n%q", argv, want)
	}
	if got := strings.Join(files, " "); got != "/lib/systemd/system/kubelet.service /etc/systemd/system/kubelet.service.d/10-kubeadm.conf /lib/systemd/system/kubelet.service.d/20-extra.conf" {
		t.Errorf("files read: %s", got)
	}
	// A unit in /etc hides the packaged one; two ExecStart lines are an error.
	root = writeRoot(t, map[string]string{
		"usr/lib/systemd/system/kubelet.service":      "[Service]\nExecStart=/usr/bin/kubelet\n",
		"etc/systemd/system/kubelet.service":          "[Service]\nExecStart=/usr/bin/kubelet $KUBELET_ARGS\n",
		"etc/systemd/system/kubelet.service.d/x.conf": "[Service]\nExecStart=/usr/bin/kubelet --v=2\n",
	})
	if _, _, err := execStart(root, "kubelet.service"); err == nil || !strings.Contains(err.Error(), "2 ExecStart") {
		t.Errorf("two ExecStart lines: %v", err)
	}
}

// The enable link must name a unit file that is there.
func TestEnabledLink(t *testing.T) {
	root := writeRoot(t, map[string]string{"usr/lib/systemd/system/kubelet.service": "[Service]\n"})
	wants := filepath.Join(root, "etc/systemd/system/multi-user.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := enabledLink(root, "kubelet.service"); err == nil {
		t.Error("no link: no error")
	}
	if err := os.Symlink("/etc/systemd/system/kubelet.service", filepath.Join(wants, "kubelet.service")); err != nil {
		t.Fatal(err)
	}
	if _, err := enabledLink(root, "kubelet.service"); err == nil || !strings.Contains(err.Error(), "dangles") {
		t.Errorf("dangling link: %v", err)
	}
	os.Remove(filepath.Join(wants, "kubelet.service"))
	if err := os.Symlink("/usr/lib/systemd/system/kubelet.service", filepath.Join(wants, "kubelet.service")); err != nil {
		t.Fatal(err)
	}
	if got, err := enabledLink(root, "kubelet.service"); err != nil || got != "/usr/lib/systemd/system/kubelet.service" {
		t.Errorf("link: %s, %v", got, err)
	}
}
