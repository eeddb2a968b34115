package framework

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeShadow stands in for shadow-sysctls.sh: it runs the "kubelet"
// script given as the binary, whose behaviour depends on how often it ran.
func fakeShadow(t *testing.T, kubelet string) KubeletConfig {
	t.Helper()
	dir := t.TempDir()
	shadow := filepath.Join(dir, "shadow")
	// exec DIR ROOT LOGS -- BINARY ARGS...: run BINARY with the count file.
	os.WriteFile(shadow, []byte("#!/bin/sh\nshift 5\nexec /bin/sh \"$0.kubelet\" \""+filepath.Join(dir, "runs")+"\"\n"), 0o755)
	os.WriteFile(shadow+".kubelet", []byte(kubelet), 0o755)
	bin := filepath.Join(dir, "kubelet")
	os.WriteFile(bin, nil, 0o755)
	return KubeletConfig{Release: "1.7.5", Variant: "vanilla", Binary: bin, Shadow: shadow, SysctlDir: dir, PodLogDir: dir,
		ManifestDir: filepath.Join(dir, "m"), RootDir: filepath.Join(dir, "r"), LogDir: filepath.Join(dir, "logs"), CertDir: filepath.Join(dir, "pki")}
}

// The first run dies as 1.7's cAdvisor does when a cgroup vanishes in its
// start-up walk; the kubelet is started again, the dead one's log kept.
func TestKubeletRestartedAfterCadvisorStartRace(t *testing.T) {
	cfg := fakeShadow(t, `echo x >>"$1"
if [ "$(wc -l <"$1")" -eq 1 ]; then
  echo "F1127 17:14:33.549755 17086 kubelet.go:1301] Failed to start cAdvisor readdirent /sys/fs/cgroup/cpu/kubelet-e2e-node-2/kubepods/besteffort/pod1: no such file or directory"
  exit 255
fi
echo serving; exec sleep 60
`)
	k, err := StartKubelet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	first := k.Started()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(k.Log(), "serving") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if done, err := k.Exited(); done || k.Restarts() != 1 || !k.Started().After(first) {
		t.Fatalf("exited=%v (%v), restarts %d, started %v after %v; log:\n%s", done, err, k.Restarts(), k.Started(), first, k.Log())
	}
	kept, err := os.ReadFile(k.LogPath + ".cadvisor-race-1")
	if err != nil || !strings.Contains(string(kept), "Failed to start cAdvisor") {
		t.Errorf("the dead kubelet's log is not kept: %v\n%s", err, kept)
	}
	k.Stop()
	if done, _ := k.Exited(); !done || k.Restarts() != 1 {
		t.Errorf("Stop: exited %v, restarts %d", done, k.Restarts())
	}
}

// Any other exit is the kubelet's own (the orphan spec's vanilla 1.18.6
// must be seen to exit): no restart.
func TestKubeletNotRestartedAfterOtherExits(t *testing.T) {
	cfg := fakeShadow(t, `echo x >>"$1"
echo 'F1127 12:00:00.000000 1 kubelet.go:1384] Failed to start ContainerManager failed to initialize top level QOS containers: no such file or directory'
echo 'no PodsandBox found with Id "abc"'; exit 255
`)
	k, err := StartKubelet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	select {
	case <-k.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the kubelet did not exit")
	}
	if k.Restarts() != 0 {
		t.Errorf("restarted %d times after an exit that is not cAdvisor's start-up race", k.Restarts())
	}
}

// Lines as 1.9.11 and 1.20.15 (glog's format) and 1.21.14 and 1.23.17
// (structured) logged them in the e2e.
func TestPodSyncsAndReadyReadBothLogFormats(t *testing.T) {
	log := filepath.Join(t.TempDir(), "kubelet.log")
	lines := []string{
		`I1128 02:14:36.518692   28103 kubelet.go:1880] SyncLoop (SYNC): 2 pods; guaranteed-e2e-node_default(e2e-upgrade-guaranteed-0001), pair-e2e-node_default(e2e-upgrade-pair-0001)`,
		`I1128 05:55:26.374349    2411 status_manager.go:429] Ignoring same status for pod "hostnet-e2e-node_default(e2e-upgrade-hostnet-0001)", status: {Phase:Running Conditions:[{Type:Ready Status:True LastProbeTime:0001-01-01 00:00:00 +0000 UTC}]}`,
		`I1128 05:55:37.428581    7595 kubelet.go:1992] "SyncLoop (SYNC) pods" total=3 pods=[default/guaranteed-e2e-node default/onfailure-e2e-node kube-system/pair-e2e-node]`,
		`I1128 03:52:31.843289   10010 status_manager.go:535] "Ignoring same status for pod" pod="default/second-e2e-node" status={Phase:Running Conditions:[{Type:Initialized Status:True LastProbeTime:0001-01-01 00:00:00 +0000 UTC} {Type:Ready Status:False LastProbeTime:0001-01-01 00:00:00 +0000 UTC}]}`,
		`I1128 03:52:32.843289   10010 status_manager.go:535] "Ignoring same status for pod" pod="default/third-e2e-node" status={Phase:Running Conditions:[{Type:Ready Status:True LastProbeTime:0001-01-01 00:00:00 +0000 UTC}]}`,
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := &Kubelet{LogPath: log}
	if got, want := k.PodSyncs(), map[string]int{"guaranteed": 2, "pair": 2, "onfailure": 1}; !maps.Equal(got, want) {
		t.Errorf("PodSyncs() = %v, want %v", got, want)
	}
	if got, want := k.PodReady(), map[string]bool{"hostnet": true, "second": false, "third": true}; !maps.Equal(got, want) {
		t.Errorf("PodReady() = %v, want %v", got, want)
	}
}
