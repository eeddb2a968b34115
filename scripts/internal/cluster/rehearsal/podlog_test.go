package rehearsal

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kubelet-toolchain/scripts/internal/cluster/verdict"
)

const webUID = "3f1c0a52-1b2e-11e9-9d2a-0242ac110003"

// Lines as a 1.9 kubelet writes them, about web-1, its neighbour web-12
// (which must not be taken for it) and neither.
var kubeletLog = strings.Join([]string{
	`I0118 10:00:01.000000    812 kubelet.go:1837] SyncLoop (ADD, "api"): "web-1_default(` + webUID + `)"`,
	`I0118 10:00:01.100000    812 kubelet.go:1837] SyncLoop (ADD, "api"): "web-12_default(9e8d7c6b-1b2e-11e9-9d2a-0242ac110003)"`,
	`I0118 10:00:01.200000    812 reconciler.go:217] operationExecutor.VerifyControllerAttachedVolume started for volume "default-token-x7k2p" (UniqueName: "kubernetes.io/secret/` + webUID + `-default-token-x7k2p") pod "web-1" (UID: "` + webUID + `")`,
	`I0118 10:00:02.000000    812 kuberuntime_manager.go:385] No sandbox for pod "web-1_default(` + webUID + `)" can be found. Need to start a new one`,
	`I0118 10:00:02.500000    812 kubelet_node_status.go:431] Recording NodeReady event message for node node-1`,
	`E0118 10:00:03.000000    812 pod_workers.go:186] Error syncing pod 9e8d7c6b-1b2e-11e9-9d2a-0242ac110003 ("web-12_default(9e8d7c6b-1b2e-11e9-9d2a-0242ac110003)"), skipping: failed to "StartContainer" for "web"`,
	`W0118 10:00:03.100000    812 kuberuntime_container.go:191] Failed to pull image "web:1.0" for pod web-1_default(` + webUID + `)`,
	`E0118 10:00:03.200000    812 pod_workers.go:186] Error syncing pod ` + webUID + ` ("web-1_default(` + webUID + `)"), skipping: failed to "StartContainer" for "web" with ErrImageNeverPull: "Container image \"web:1.0\" is not present with pull policy of Never"`,
	`I0118 10:00:04.000000    812 volume_manager.go:366] All volumes are attached and mounted for pod "kubernetes.io/secret/` + webUID + `-default-token-x7k2p"`,
	`I0118 10:00:05.000000    812 kubelet.go:1880] SyncLoop (housekeeping)`,
}, "\n") + "\n"

func TestPodLogLines(t *testing.T) {
	got := podLogLines(kubeletLog, "web-1", webUID)
	lines := strings.Split(kubeletLog, "\n")
	// The last five of web-1's six lines (0, 2, 3, 6, 7, 8), in order: the
	// last one only names its UID.
	want := []string{lines[2], lines[3], lines[6], lines[7], lines[8]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("web-1's kubelet lines:\n got %q\nwant %q", got, want)
	}
	// By name alone, web-12's lines are not web-1's.
	for _, l := range podLogLines(kubeletLog, "web-1", "") {
		if strings.Contains(l, "web-12") {
			t.Errorf("web-1's lines hold web-12's: %q", l)
		}
	}
	if got := podLogLines(kubeletLog, "db-0", "6f5e4d3c-1b2e-11e9-9d2a-0242ac110003"); len(got) != 0 {
		t.Errorf("a pod the log never names: %q", got)
	}
	long := "I0118 10:00:06.000000    812 config.go:405] Receiving a new pod \"web-1_default\" " + strings.Repeat("x", 10000)
	if got := podLogLines(long, "web-1", ""); len(got) != 1 || len(got[0]) > 500 {
		t.Errorf("a long line is not cut: %d lines, the first %d bytes", len(got), len(got[0]))
	}
}

func TestNotReadyReport(t *testing.T) {
	// Not on a rehearsal node (c.Nodes is empty): what the API says only.
	pods := []verdict.PodState{
		{Namespace: "default", Name: "web-1", Phase: "Pending", Node: "node-1", Containers: map[string]verdict.ContainerState{
			"web": {Waiting: "ErrImageNeverPull: Container image \"web:1.0\" is not present with pull policy of Never"},
		}},
		{Namespace: "jobs", Name: "big", Phase: "Pending", Unscheduled: "Unschedulable: 0/2 nodes are available: 2 Insufficient memory."},
	}
	got := (&Cluster{}).notReadyReport(pods)
	want := `
  default/web-1 (Pending on "node-1")
    container web: waiting: ErrImageNeverPull: Container image "web:1.0" is not present with pull policy of Never
  jobs/big (Pending on "")
    unscheduled: Unschedulable: 0/2 nodes are available: 2 Insufficient memory.`
	if got != want {
		t.Errorf("report:\n got %q\nwant %q", got, want)
	}
}

// A kubelet's fatal exit is followed by every goroutine's stack: the exit
// is reported by its fatal line, not by the dump's last lines.
func TestLastLinesPrefersFatal(t *testing.T) {
	log := filepath.Join(t.TempDir(), "kubelet.log")
	os.WriteFile(log, []byte("I1128 12:00:00.000000 1 server.go:1] starting\n"+
		"F1128 12:00:01.000000 1 kubelet.go:1383] Failed to start ContainerManager failed to build map of initial containers from runtime: no PodsandBox found with Id 'abc'\n"+
		"goroutine 1 [running]:\nk8s.io/klog.stacks(0x1)\n\t/x/klog.go:875 +0xb9\n"), 0o644)
	got := lastLines(log, 3)
	if len(got) != 1 || !strings.Contains(got[0], "no PodsandBox found with Id") {
		t.Errorf("lastLines = %q, want the fatal line", got)
	}
	os.WriteFile(log, []byte("a\nb\n\nc\nd\n"), 0o644)
	if got := lastLines(log, 3); strings.Join(got, ",") != "b,c,d" {
		t.Errorf("without a fatal line: %q, want the last 3", got)
	}
}

// The wait for Ready pods counts the static pods each node must mirror:
// every manifest file but dotfiles, against the mirror pods on the node.
func TestStaticPodsMirrored(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"static-web.yaml", "db.json", ".swp"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n := staticManifests(dir); n != 2 {
		t.Errorf("staticManifests = %d, want 2", n)
	}
	pods := map[string]verdict.PodState{
		"a/web-node-1": {Node: "node-1", Mirror: true},
		"a/x":          {Node: "node-1"},
		"a/db-node-2":  {Node: "node-2", Mirror: true},
	}
	if n := mirrors(pods, "node-1"); n != 1 {
		t.Errorf("mirrors on node-1 = %d, want 1", n)
	}
}
