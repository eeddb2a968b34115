package scratchroot

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The stand-ins, run chrooted as the scriptlets run them, enable a unit
// the way deb-systemd-helper and systemctl do, remember it was enabled
// (so a later disable is kept), and record starts and stops.
func TestStandins(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("chroot needs root (make test runs as root)")
	}
	root := t.TempDir()
	if err := Prepare(root); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(root, "lib/systemd/system/kubelet.service")
	if err := os.MkdirAll(filepath.Dir(unit), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unit, []byte("[Service]\nExecStart=/usr/bin/kubelet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(script string) error {
		cmd := exec.Command("chroot", root, "/bin/sh", "-c", script)
		cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DPKG_MAINTSCRIPT_PACKAGE=kubelet", "DPKG_MAINTSCRIPT_NAME=postinst"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Logf("%s: %s", script, out)
		}
		return err
	}
	if err := run("deb-systemd-helper --quiet was-enabled kubelet.service && deb-systemd-helper enable kubelet.service >/dev/null && deb-systemd-invoke start kubelet.service"); err != nil {
		t.Fatal(err)
	}
	link, err := os.Readlink(filepath.Join(root, "etc/systemd/system/multi-user.target.wants/kubelet.service"))
	if err != nil || link != "/lib/systemd/system/kubelet.service" {
		t.Errorf("enable link -> %q (%v), want /lib/systemd/system/kubelet.service", link, err)
	}
	if s := UnitState(root, "kubelet.service"); s != "active" {
		t.Errorf("state %q after start", s)
	}
	// Disabled by the admin: was-enabled says no, so an upgrade keeps it off.
	if err := run("systemctl disable kubelet.service"); err != nil {
		t.Fatal(err)
	}
	if err := run("deb-systemd-helper --quiet was-enabled kubelet.service"); err == nil {
		t.Error("was-enabled after a disable")
	}
	if err := run("deb-systemd-invoke stop kubelet.service"); err != nil {
		t.Fatal(err)
	}
	if s := UnitState(root, "kubelet.service"); s != "inactive" {
		t.Errorf("state %q after stop", s)
	}
	calls, err := Calls(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(calls, "\n"); !strings.Contains(got, "kubelet postinst deb-systemd-invoke start kubelet.service") || !strings.Contains(got, "kubelet postinst deb-systemd-invoke stop kubelet.service") {
		t.Errorf("calls:\n%s", got)
	}
}
