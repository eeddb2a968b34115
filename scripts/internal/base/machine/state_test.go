package machine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fakeProc(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, v := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func read(t *testing.T, files map[string]string) *State {
	t.Helper()
	s, err := Read(fakeProc(t, files))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keys(cs []Change) string {
	var k []string
	for _, c := range cs {
		k = append(k, c.String())
	}
	return strings.Join(k, "; ")
}

func TestCompare(t *testing.T) {
	before := read(t, map[string]string{
		"sys/vm/overcommit_memory":           "0\n",
		"sys/kernel/panic":                   "0\n",
		"sys/fs/file-nr":                     "1 0 9\n",
		"sys/net/ipv4/conf/eth0/forwarding":  "0\n",
		"sys/net/ipv4/conf/veth1/forwarding": "0\n",
		"modules":                            "overlay 1 0 - Live\n",
	})
	after := read(t, map[string]string{
		"sys/vm/overcommit_memory":                  "1\n", // a kubelet wrote it
		"sys/kernel/panic":                          "0\n",
		"sys/fs/file-nr":                            "7 0 9\n", // a counter
		"sys/net/ipv4/conf/eth0/forwarding":         "1\n",     // an interface of the machine's
		"sys/net/ipv4/conf/kubelet-e2e0/forwarding": "0\n",     // a bridge that came up
		"sys/net/bridge/bridge-nf-call-iptables":    "1\n",     // br_netfilter loaded
		"modules":                                   "br_netfilter 1 0 - Live\noverlay 1 0 - Live\n",
	})
	got := keys(Compare(before, after, nil))
	want := "module br_netfilter: appeared (loaded); net/bridge/bridge-nf-call-iptables: appeared (1); net/ipv4/conf/eth0/forwarding: 0 -> 1; vm/overcommit_memory: 0 -> 1"
	if got != want {
		t.Errorf("changes:\n got %s\nwant %s", got, want)
	}
	got = keys(Compare(before, after, []string{"module br_netfilter", "net/bridge/bridge-nf-call-iptables", "net/ipv4/conf/eth0/forwarding"}))
	if got != "vm/overcommit_memory: 0 -> 1" {
		t.Errorf("with the stated requirements allowed: %s", got)
	}
	if c := Compare(before, before, nil); len(c) != 0 {
		t.Errorf("a record differs from itself: %s", keys(c))
	}
}

func TestNoModuleSupport(t *testing.T) {
	s := read(t, map[string]string{"sys/kernel/panic": "0\n"})
	if s.Modules != nil {
		t.Errorf("no /proc/modules read as %v, want nil (not compared)", s.Modules)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil || l.Sysctls["kernel/panic"] != "0" || l.Modules != nil {
		t.Errorf("Load(Save(s)) = %+v, %v", l, err)
	}
}

// TestReadsThisMachine reads the real /proc/sys: the settings the
// kubelets write must be among what is recorded.
func TestReadsThisMachine(t *testing.T) {
	s, err := Read("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops", "vm/panic_on_oom"} {
		if _, ok := s.Sysctls[k]; !ok {
			t.Errorf("%s not recorded (%d entries)", k, len(s.Sysctls))
		}
	}
}
