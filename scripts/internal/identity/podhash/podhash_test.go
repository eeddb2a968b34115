package podhash

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func res(pod, c string, hash uint64, uid string, derived bool, accepted *bool) Result {
	return Result{Pod: pod, Container: c, Hash: hash, UID: uid, UIDDerived: derived, Accepted: accepted}
}

func ptr(b bool) *bool { return &b }

func TestPreflightVerdicts(t *testing.T) {
	from := []Result{
		res("ns/api", "app", 1, "u1", false, nil),
		res("ns/static", "web", 2, "old-uid", true, nil),
	}
	vanilla := []Result{
		res("ns/api", "app", 10, "u1", false, ptr(false)),
		res("ns/static", "web", 20, "new-uid", true, ptr(false)),
	}
	patched := []Result{
		res("ns/api", "app", 1, "u1", false, ptr(true)),
		res("ns/static", "web", 2, "new-uid", true, ptr(true)),
	}
	rep, err := Preflight(Inputs{From: "1.7.5", To: "1.9.11", FromResults: from, Vanilla: vanilla, Patched: patched})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Rows[0]; got.VanillaVerdict != recreated || got.PatchedVerdict != kept || got.VanillaOutcome != OutcomeRecreated || got.PatchedOutcome != OutcomeKept {
		t.Errorf("api pod: %+v", got)
	}
	// Hash accepted, but the static pod UID changes: the pod is replaced.
	if got := rep.Rows[1]; !strings.HasPrefix(got.PatchedVerdict, recreated) {
		t.Errorf("static pod with a new UID: %+v", got)
	}
	if rep.Recreating != 1 || len(rep.UIDs) != 1 || !rep.UIDs[0].PodReplaced || !rep.Failed() {
		t.Errorf("report: %+v", rep)
	}
	var table strings.Builder
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "whole pod is replaced") {
		t.Errorf("table does not say the pod is replaced:\n%s", table.String())
	}
	if _, err := Preflight(Inputs{FromResults: from, Vanilla: vanilla[:1], Patched: patched}); err == nil {
		t.Error("mismatched results accepted")
	}
}

// The kubelet never hash-compares init containers: a changed hash there
// recreates nothing and must not fail the preflight.
func TestPreflightInitContainersNotCompared(t *testing.T) {
	init := func(h uint64, acc *bool) Result {
		r := res("ns/p", "setup", h, "u", false, acc)
		r.Init = true
		return r
	}
	rep, err := Preflight(Inputs{From: "1.7.5", To: "1.9.11",
		FromResults: []Result{init(1, nil)}, Vanilla: []Result{init(2, ptr(false))}, Patched: []Result{init(3, ptr(false))}})
	if err != nil {
		t.Fatal(err)
	}
	if row := rep.Rows[0]; row.PatchedVerdict != notCompared || row.VanillaVerdict != notCompared || row.PatchedOutcome != "" || rep.Failed() {
		t.Errorf("init container: %+v, failed=%v", row, rep.Failed())
	}
}

func TestPreflightRejectedAndNotEnforced(t *testing.T) {
	rejected := res("ns/priv", "app", 0, "", false, nil)
	rejected.Rejected = "privileged disallowed"
	fromPSP := res("ns/psp", "app", 1, "u", false, nil)
	fromPSP.Dropped = []string{"securityContext.allowPrivilegeEscalation"}
	keptPSP := res("ns/psp", "app", 1, "u", false, ptr(true))
	rep, err := Preflight(Inputs{From: "1.7.5", To: "1.9.11",
		FromResults: []Result{res("ns/priv", "app", 5, "", false, nil), fromPSP},
		Vanilla:     []Result{rejected, res("ns/psp", "app", 2, "u", false, ptr(false))},
		Patched:     []Result{rejected, keptPSP}})
	if err != nil {
		t.Fatal(err)
	}
	if row := rep.Rows[0]; !strings.HasPrefix(row.PatchedVerdict, "rejected by 1.9.11: privileged") || row.PatchedOutcome != OutcomeRejected || rep.Rejecting != 1 || !rep.Failed() {
		t.Errorf("rejected pod: %+v (rejecting %d)", row, rep.Rejecting)
	}
	row := rep.Rows[1]
	if row.PatchedVerdict != "kept, spec not enforced: securityContext.allowPrivilegeEscalation" || row.PatchedOutcome != OutcomeKept || len(row.NotEnforced) != 1 {
		t.Errorf("PSP-filled field: %+v", row)
	}
	if rep.Recreating != 0 {
		t.Errorf("a kept container counted as recreated: %+v", rep)
	}
}

func TestPreflightNode(t *testing.T) {
	node := &NodeState{Endpoint: "unix:///x", NodeName: "n1", Containers: []*NodeContainer{
		{Namespace: "ns", Pod: "api", Container: "app", PodUID: "u1", Hash: 7},
		{Namespace: "kube-system", Pod: "proxy-n1", Container: "kube-proxy", PodUID: "derived", Hash: 8},
		{Namespace: "ns", Pod: "other", Container: "x", Hash: 9},
	}}
	api := res("ns/api", "app", 70, "u1", false, nil)
	static := res("kube-system/proxy", "kube-proxy", 80, "derived", true, nil)
	missing := res("ns/gone", "c", 1, "u3", false, nil)
	stored := node.StoredFor([]Result{api, static, missing})
	if stored["ns/api/app"] != 7 || stored["kube-system/proxy/kube-proxy"] != 8 || len(stored) != 2 {
		t.Fatalf("stored hashes: %v", stored)
	}
	accepted := func(r Result, ok bool) Result { r.Accepted = &ok; return r }
	rep, err := Preflight(Inputs{To: "1.9.11", Node: node,
		Vanilla: []Result{accepted(api, false), accepted(static, false), missing},
		Patched: []Result{accepted(api, true), accepted(static, true), missing}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Rows[0]; r.PatchedVerdict != kept || r.VanillaVerdict != recreated || r.StoredHash == nil || *r.StoredHash != 7 {
		t.Errorf("api pod: %+v", r)
	}
	if r := rep.Rows[1]; r.PatchedVerdict != kept || len(rep.UIDs) != 1 || rep.UIDs[0].PodReplaced {
		t.Errorf("static pod: %+v %+v", r, rep.UIDs)
	}
	if r := rep.Rows[2]; r.PatchedVerdict != notRunning {
		t.Errorf("pod not on the node: %+v", r)
	}
	if len(rep.Unmatched) != 1 || rep.Unmatched[0] != "ns/other/x" {
		t.Errorf("unmatched: %v", rep.Unmatched)
	}
}

func TestCorpus(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	n, err := Corpus(a, 300, 1, "", true)
	if err != nil || n < 300 {
		t.Fatalf("corpus of %d: %v", n, err)
	}
	if _, err := Corpus(b, 300, 1, "-new", true); err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if string(da) == string(db) || strings.ReplaceAll(string(db), "-new", "") != string(da) {
		t.Error("the second corpus must differ from the first in images only")
	}
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(da, &list); err != nil || list.Kind != "List" || len(list.Items) == 0 {
		t.Fatalf("not a List: %v", err)
	}
	for _, field := range []string{"allowPrivilegeEscalation", "mountPropagation", "volumeDevices", "privileged", "initContainers", "valueFrom", "subPath"} {
		if !strings.Contains(string(da), field) {
			t.Errorf("corpus never sets %s", field)
		}
	}
	c, _ := Corpus(filepath.Join(dir, "c.json"), 300, 1, "", false)
	dc, _ := os.ReadFile(filepath.Join(dir, "c.json"))
	if c < 300 || strings.Contains(string(dc), "mountPropagation") || strings.Contains(string(dc), "volumeDevices") {
		t.Error("a corpus without alpha gates still sets mountPropagation")
	}
}

// The patched TO derives FROM's UID for a static pod without metadata.uid
// (k19-fixes 0004): kept by the patched TO, replaced by the vanilla one,
// and the summary says which.
func TestPreflightStaticUIDKeptByPatched(t *testing.T) {
	from := []Result{res("kube-system/proxy", "kube-proxy", 1, "uid-17", true, nil)}
	vanilla := []Result{res("kube-system/proxy", "kube-proxy", 10, "uid-19", true, ptr(false))}
	patched := []Result{res("kube-system/proxy", "kube-proxy", 1, "uid-17", true, ptr(true))}
	rep, err := Preflight(Inputs{From: "1.7.5", To: "1.9.11", FromResults: from, Vanilla: vanilla, Patched: patched})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Rows[0]; r.PatchedVerdict != kept || r.VanillaVerdict != podReplaced || r.VanillaOutcome != OutcomeReplaced {
		t.Errorf("row: %+v", r)
	}
	if u := rep.UIDs; len(u) != 1 || u[0].PodReplaced || !u[0].VanillaReplaced || rep.Failed() {
		t.Errorf("report: %+v", rep)
	}
	var table strings.Builder
	rep.WriteTable(&table)
	out := table.String()
	if !strings.Contains(out, "the vanilla 1.9.11 derives another UID and replaces the whole pod") ||
		strings.Contains(out, "the patched 1.9.11 derives another UID") || !strings.Contains(out, "OK: the patched 1.9.11 recreates nothing") {
		t.Errorf("table:\n%s", out)
	}
}

// Node mode: the UID the node's containers carry decides. A pod running
// under the newer-Go derivation (an earlier 1.7 build) is kept by a
// patched TO that keeps that derivation, replaced by the vanilla TO; a pod
// running under a UID no derivation gives is replaced by both.
func TestPreflightStaticUIDFollowsTheRunningUID(t *testing.T) {
	node := &NodeState{Endpoint: "unix:///x", NodeName: "n1", Containers: []*NodeContainer{
		{Namespace: "kube-system", Pod: "etcd-n1", Container: "etcd", PodUID: "uid-17-newer-go", Hash: 1},
		{Namespace: "kube-system", Pod: "proxy-n1", Container: "kube-proxy", PodUID: "uid-unknown", Hash: 2},
	}}
	from := func(pod, c string) Result {
		r := res(pod, c, 0, "uid-17-official", true, nil)
		r.UIDNewerGo = "uid-17-newer-go"
		return r
	}
	patched := func(pod, c string, h uint64) Result {
		r := res(pod, c, h, "uid-17-official", true, ptr(true))
		r.UIDsKept = []string{"uid-17-official", "uid-17-newer-go", "uid-19"}
		return r
	}
	rep, err := Preflight(Inputs{From: "1.7.5", To: "1.9.11", Node: node,
		FromResults: []Result{from("kube-system/etcd", "etcd"), from("kube-system/proxy", "kube-proxy")},
		Vanilla:     []Result{res("kube-system/etcd", "etcd", 10, "uid-19", true, ptr(false)), res("kube-system/proxy", "kube-proxy", 20, "uid-19", true, ptr(false))},
		Patched:     []Result{patched("kube-system/etcd", "etcd", 1), patched("kube-system/proxy", "kube-proxy", 2)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.UIDs) != 2 {
		t.Fatalf("UIDs: %+v", rep.UIDs)
	}
	if u := rep.UIDs[0]; u.Running != "uid-17-newer-go" || u.From != "uid-17-official" || u.FromNewerGo != "uid-17-newer-go" || u.PodReplaced || !u.VanillaReplaced {
		t.Errorf("pod under the newer-Go UID: %+v", u)
	}
	if u := rep.UIDs[1]; !u.PodReplaced || !u.VanillaReplaced {
		t.Errorf("pod under an unknown UID: %+v", u)
	}
	if r := rep.Rows[0]; r.PatchedVerdict != kept || r.VanillaVerdict != podReplaced || r.VanillaOutcome != OutcomeReplaced {
		t.Errorf("etcd row: %+v", r)
	}
	if r := rep.Rows[1]; r.PatchedVerdict != podReplaced || rep.Recreating != 1 {
		t.Errorf("proxy row: %+v, recreating %d", r, rep.Recreating)
	}
	var table strings.Builder
	rep.WriteTable(&table)
	if out := table.String(); !strings.Contains(out, "uid-17-newer-go") || !strings.Contains(out, "RUNNING UID") {
		t.Errorf("table lacks the running UID:\n%s", out)
	}
}

// A caveat from FROM (its official UID depends on the node's zone tables)
// reaches the report and the table.
func TestPreflightStaticUIDCaveat(t *testing.T) {
	f := res("default/clock", "c", 1, "uid-17", true, nil)
	f.UIDCaveat = "creationTimestamp set and Local is Europe/Berlin"
	rep, err := Preflight(Inputs{From: "1.7.5", To: "1.9.11", FromResults: []Result{f},
		Vanilla: []Result{res("default/clock", "c", 1, "uid-19", true, ptr(true))},
		Patched: []Result{res("default/clock", "c", 1, "uid-17", true, ptr(true))}})
	if err != nil {
		t.Fatal(err)
	}
	if u := rep.UIDs; len(u) != 1 || u[0].Caveat == "" || u[0].PodReplaced {
		t.Fatalf("UIDs: %+v", u)
	}
	var table strings.Builder
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "may differ on the node: creationTimestamp set") {
		t.Errorf("table:\n%s", table.String())
	}
}

// A golden's official UID is the md5 of the dump rewritten into go1.8.3's
// layout (the expected text written by hand from go1.8.3's time.Time), and
// a dump that is not what the helper hashed is refused.
func TestGolden(t *testing.T) {
	newerGo := `(*api.Pod){ObjectMeta:(v1.ObjectMeta){CreationTimestamp:(v1.Time){Time:(time.Time){wall:(uint64)0 ext:(int64)0 loc:(*time.Location)<nil>}}}}`
	official := `(*api.Pod){ObjectMeta:(v1.ObjectMeta){CreationTimestamp:(v1.Time){Time:(time.Time){sec:(int64)0 nsec:(int32)0 loc:(*time.Location)<nil>}}}}`
	g, dumps, err := golden("m.yaml", "default/m", md5hex(newerGo), newerGo, map[string]string{"c": `(v1.Container){Name:(string)c}`})
	if err != nil {
		t.Fatal(err)
	}
	if g.OfficialUID != md5hex(official) || g.NewerGoUID != md5hex(newerGo) || g.OfficialUID == g.NewerGoUID {
		t.Errorf("golden %+v", g)
	}
	if c := g.Containers["c"]; c.OfficialHash != c.NewerGoHash || c.OfficialHash != fnv32a(`(v1.Container){Name:(string)c}`) {
		t.Errorf("container golden %+v", c)
	}
	if len(dumps) != 2 || dumps[0].official != official {
		t.Errorf("dumps %+v", dumps)
	}
	if _, _, err := golden("m.yaml", "default/m", "0123", newerGo, nil); err == nil || !strings.Contains(err.Error(), "the helper derived 0123") {
		t.Errorf("a dump that is not what the helper hashed: %v", err)
	}
}

// A hung container keeps vanilla's node NotReady up to 1.23 (cadvisor's
// inspect at runtime start); from 1.24 the kubelet has no cadvisor Docker
// factory and the node is Ready either way: the prediction says so, and
// where the hang stalls instead (the shim's status inspects).
func TestPreflightHungByRelease(t *testing.T) {
	for to, want := range map[string][2]string{
		"1.23.17": {HungNotReady + ": the restarted kubelet's runtime start waits on cadvisor's inspect", HungReady + ": the inspects give up"},
		"1.24.17": {HungReady + " (1.24+ has no cadvisor Docker factory); every PLEG relist", HungReady + ": dockershim's status inspects give up"},
		"1.25.16": {HungReady + " (1.24+", HungReady + ": dockershim's"},
	} {
		node := &NodeState{Endpoint: "unix:///x", NodeName: "n1", Hung: []*NodeContainer{{Namespace: "ns", Pod: "db-0", Container: "db", ID: "hung"}}}
		rep, err := Preflight(Inputs{To: to, Node: node})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Hung) != 1 || !strings.HasPrefix(rep.Hung[0].Vanilla, want[0]) || !strings.HasPrefix(rep.Hung[0].Patched, want[1]) {
			t.Errorf("TO %s: %+v, want vanilla %q..., patched %q...", to, rep.Hung, want[0], want[1])
		}
	}
}
