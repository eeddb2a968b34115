package machine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShadowKeepsWritesOffTheMachine runs a stand-in for a kubelet through
// scripts/node/shadow-sysctls.sh: it must read the Linux default whatever
// the machine holds, its write must land in the shadow file, the machine's
// value must stay, a mount made under the shared dir must reach the
// machine's namespace (where dockerd sees the kubelet's volume mounts), and
// what it writes in /var/log/pods and /var/log/containers must land in its
// own log dir, the machine's left as they were.
func TestShadowKeepsWritesOffTheMachine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (mount namespaces): make test runs as root")
	}
	script, err := filepath.Abs("../../../node/shadow-sysctls.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sysctls, shared, logs := filepath.Join(dir, "sysctls"), filepath.Join(dir, "root"), filepath.Join(dir, "logs")
	marker := "shadow-test-" + filepath.Base(dir)
	t.Cleanup(func() {
		exec.Command("umount", "-R", "-l", shared).Run()
	})
	machineBefore, err := Read("/proc")
	if err != nil {
		t.Fatal(err)
	}
	const key = "kernel/panic" // the kubelet wants 10, Linux's default is 0
	child := `echo "read=$(cat /proc/sys/` + key + `)"; echo 10 >/proc/sys/` + key + `
echo "shadows=$(grep -c ' /proc/sys/' /proc/self/mountinfo)"
mkdir -p "$1/vol" && mount -t tmpfs shadow-test "$1/vol"
mkdir /var/log/pods/$2 && ln -s /dev/null /var/log/containers/$2.log`
	out, err := exec.Command(script, "exec", sysctls, shared, logs, "--", "sh", "-c", child, "sh", shared, marker).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	if !strings.Contains(string(out), "\nread=0\n") && !strings.HasPrefix(string(out), "read=0\n") {
		t.Errorf("the child did not read the Linux default 0 for %s (the machine held %s):\n%s", key, machineBefore.Sysctls[key], out)
	}
	if strings.Contains(string(out), "shadows=0\n") {
		t.Errorf("no /proc/sys entry is a mount in the child's namespace:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(sysctls, key)); err != nil || strings.TrimSpace(string(b)) != "10" {
		t.Errorf("the child's write did not land in its shadow file: %q, %v", b, err)
	}
	after, err := Read("/proc")
	if err != nil {
		t.Fatal(err)
	}
	if c := Compare(machineBefore, after, nil); len(c) != 0 {
		t.Errorf("the machine changed: %v", c)
	}
	for _, p := range []string{"pods/" + marker, "containers/" + marker + ".log"} {
		if _, err := os.Lstat(filepath.Join("/var/log", p)); err == nil {
			os.RemoveAll(filepath.Join("/var/log", p))
			t.Errorf("/var/log/%s was written on the machine, not in the child's own log dir", p)
		}
		if _, err := os.Lstat(filepath.Join(logs, p)); err != nil {
			t.Errorf("the child's /var/log/%s is not in its log dir: %v", p, err)
		}
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if !strings.Contains(string(mounts), " "+filepath.Join(shared, "vol")+" ") {
		t.Errorf("a mount made under the shared dir in the child's namespace is not seen by the machine's")
	}
}
