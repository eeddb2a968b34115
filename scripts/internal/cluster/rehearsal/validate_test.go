package rehearsal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/base/matrix"
)

func TestCheckNodes(t *testing.T) {
	for n, ok := range map[int]bool{-1: false, 0: false, 1: true, 2: true, MaxNodes: true, MaxNodes + 1: false} {
		err := CheckNodes(n)
		if (err == nil) != ok {
			t.Errorf("NODES=%d: %v", n, err)
		}
		if err != nil && !strings.Contains(err.Error(), "NODES=") {
			t.Errorf("NODES=%d: the error does not name NODES: %v", n, err)
		}
	}
}

func TestCheckSkew(t *testing.T) {
	cp := &matrix.Release{Release: "1.9.11"}
	for k, ok := range map[string]bool{"1.7.5": true, "1.8.15": true, "1.9.11": true, "1.6.13": false, "1.12.10": false, "1.18.6": false} {
		err := CheckSkew("TO", &matrix.Release{Release: k}, cp)
		if (err == nil) != ok {
			t.Errorf("kubelet %s against %s: %v", k, cp.Release, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "TO="+k) || !strings.Contains(err.Error(), "1.7 to 1.9")) {
			t.Errorf("kubelet %s: the error names neither the value nor the rule: %v", k, err)
		}
	}
}

func TestControlPlaneFor(t *testing.T) {
	m := &matrix.Matrix{Releases: []matrix.Release{{Release: "1.7.5"}, {Release: "1.9.11"}, {Release: "1.12.10"}, {Release: "1.13.12"}, {Release: "1.18.6"}, {Release: "1.22.17"}, {Release: "1.23.17"}, {Release: "1.25.16"}}}
	m.Releases[7].Series.ControlPlane = "k125-control-plane"
	m.Releases[1].Series.ControlPlane = "k19-control-plane"
	m.Releases[5].Series.ControlPlane = "k122-control-plane"
	m.Releases[6].Series.ControlPlane = "k123-control-plane"
	m.Releases[3].Series.ControlPlane = "k113-control-plane"
	m.Releases[2].Series.ControlPlane = "k112-control-plane" // overlaps 1.13.12's kubelets: the newer wins
	r := func(v string) *matrix.Release { return &matrix.Release{Release: v} }
	for _, c := range []struct {
		from, to, want string
	}{
		{"1.7.5", "1.9.11", "1.9.11"},
		{"1.9.11", "1.9.11", "1.9.11"},
		{"1.12.10", "1.13.12", "1.13.12"},
		{"1.11.10", "1.11.10", "1.13.12"},
		{"1.10.13", "1.11.10", "1.12.10"},
		{"1.9.11", "1.13.12", ""},
		{"1.18.6", "1.18.6", ""},
		{"1.13.12", "", "1.13.12"},
		{"1.20.15", "1.21.14", "1.22.17"}, // 1.23.17 would skew 1.20 by three
		{"1.21.14", "1.21.14", "1.23.17"},
		{"1.22.17", "1.23.17", "1.23.17"},
		{"1.23.17", "1.20.15", ""},
		{"1.23.17", "1.24.17", "1.25.16"}, // leaving dockershim
		{"1.23.17", "1.25.16", "1.25.16"},
		{"1.23.17", "1.23.17", "1.25.16"},
		{"1.26.15", "1.26.15", ""},
		{"1.19.16", "1.19.16", ""},
	} {
		kubelets := map[string]*matrix.Release{"FROM": r(c.from)}
		if c.to != "" {
			kubelets["TO"] = r(c.to)
		}
		cp, err := ControlPlaneFor(m, kubelets)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s -> %s: control plane %s, want a refusal", c.from, c.to, cp.Release)
		case c.want == "" && !strings.Contains(err.Error(), "FROM="+c.from) || c.want == "" && !strings.Contains(err.Error(), "1.25.16 (kubelets 1.23 to 1.25), 1.23.17 (kubelets 1.21 to 1.23), 1.22.17 (kubelets 1.20 to 1.22), 1.13.12 (kubelets 1.11 to 1.13), 1.12.10 (kubelets 1.10 to 1.12), 1.9.11 (kubelets 1.7 to 1.9)"):
			t.Errorf("%s -> %s: the refusal names neither the kubelets nor what each control plane supports: %v", c.from, c.to, err)
		case c.want != "" && err != nil:
			t.Errorf("%s -> %s: %v", c.from, c.to, err)
		case c.want != "" && cp.Release != c.want:
			t.Errorf("%s -> %s: control plane %s, want %s", c.from, c.to, cp.Release, c.want)
		}
	}
}

func writeManifests(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      initContainers: [{name: init, image: "busybox:1.36"}]
      containers: [{name: app, image: "registry.local:5000/web:1.2"}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
`

func TestCheckManifests(t *testing.T) {
	if err := CheckManifests(writeManifests(t, map[string]string{"web.yaml": goodDeployment, "README.md": "not a manifest"}), nil); err != nil {
		t.Fatalf("good manifests refused: %v", err)
	}
	for name, tc := range map[string]struct {
		files map[string]string
		want  []string
	}{
		"not YAML":         {map[string]string{"a.yaml": "kind: [unclosed"}, []string{"a.yaml (document 1)", "not YAML"}},
		"no kind":          {map[string]string{"a.yaml": "apiVersion: v1\nmetadata: {name: x}\n"}, []string{"no kind"}},
		"no apiVersion":    {map[string]string{"sub/b.json": `{"kind": "Pod"}`}, []string{"sub/b.json", "no apiVersion"}},
		"latest":           {map[string]string{"a.yaml": "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: app, image: nginx:latest}]\n"}, []string{"container app", ":latest"}},
		"untagged":         {map[string]string{"a.yaml": "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: app, image: registry.local:5000/nginx}]\n"}, []string{":latest"}},
		"pull always":      {map[string]string{"a.yaml": "apiVersion: batch/v1beta1\nkind: CronJob\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: job, image: 'x:1', imagePullPolicy: Always}]\n"}, []string{"container job", "imagePullPolicy Always"}},
		"second document":  {map[string]string{"a.yaml": goodDeployment + "---\nfoo: bar\n"}, []string{"document 3", "no apiVersion"}},
		"nothing to apply": {map[string]string{"notes.txt": "hello"}, []string{"no Kubernetes object"}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeManifests(t, tc.files)
			err := CheckManifests(dir, nil)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range append(tc.want, "MANIFESTS="+dir) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if err := CheckManifests(filepath.Join(t.TempDir(), "missing"), nil); err == nil || !strings.Contains(err.Error(), "MANIFESTS=") {
		t.Errorf("a missing directory: %v", err)
	}
}

func TestCheckImageFiles(t *testing.T) {
	dir := t.TempDir()
	tarball := filepath.Join(dir, "app.tar")
	if err := os.WriteFile(tarball, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckImageFiles([]string{"e2e.local/app:1", tarball}); err != nil {
		t.Errorf("a name and a tarball refused: %v", err)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.tar"), dir} {
		if err := CheckImageFiles([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("IMAGES=%s: %v", bad, err)
		}
	}
}

func TestLockMachine(t *testing.T) {
	dir := t.TempDir()
	oldLock, oldOwner := lockPath, ownerPath
	lockPath, ownerPath = filepath.Join(dir, "rehearsal%s.lock"), filepath.Join(dir, "rehearsal%s.owner")
	defer func() { lockPath, ownerPath = oldLock, oldOwner }()
	ra, rb := t.TempDir(), t.TempDir()
	a, b := NewLayout(ra), NewLayout(rb)

	unlock, err := LockMachine(a, "rehearsal run")
	if err != nil {
		t.Fatal(err)
	}
	// A second run, from another checkout, is refused at once, naming the
	// holder (flock is per open file, so this process stands for another).
	if _, err := LockMachine(b, "rehearsal up"); !errors.Is(err, ErrMachineBusy) || !strings.Contains(err.Error(), ra) || !strings.Contains(err.Error(), "rehearsal run") {
		t.Fatalf("second lock: %v; want busy, naming %s and its command", err, ra)
	}
	// Another instance (its own bridge, subnet and ports) is not taken.
	unlockOther, err := LockMachine(NewLayoutFor(rb, 3), "rehearsal run")
	if err != nil {
		t.Fatalf("instance 3 while instance 0 runs: %v", err)
	}
	unlockOther()
	unlock()

	// a's cluster stays up after its process: b is refused until a's down.
	if err := os.MkdirAll(a.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.Dir, "state.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setClusterOwner(a, true); err != nil {
		t.Fatal(err)
	}
	if _, err := LockMachine(b, "rehearsal run"); !errors.Is(err, ErrMachineBusy) || !strings.Contains(err.Error(), "rehearsal-down") {
		t.Fatalf("lock while another checkout's cluster is up: %v", err)
	}
	unlockA, err := LockMachine(a, "rehearsal run")
	if err != nil {
		t.Fatalf("the owner's own run refused: %v", err)
	}
	unlockA()
	setClusterOwner(b, false) // not b's record: kept
	if _, err := os.Stat(instancePath(ownerPath, 0)); err != nil {
		t.Fatalf("b cleared a's record: %v", err)
	}
	setClusterOwner(a, false)
	unlockB, err := LockMachine(b, "rehearsal run")
	if err != nil {
		t.Fatalf("after a's down: %v", err)
	}
	unlockB()
}

func TestInstancesShareNothingMachineWide(t *testing.T) {
	seen := map[string]int{}
	for n := 0; n <= MaxInstance; n++ {
		l := NewLayoutFor("/repo", n)
		nw, p := l.DefaultNetwork(), l.Ports()
		for _, k := range []string{l.Dir, nw.Bridge, nw.CIDR, fmt.Sprint("port ", p.API), fmt.Sprint("port ", p.EtcdClient),
			fmt.Sprint("port ", p.EtcdPeer), fmt.Sprint("port ", p.Scheduler), fmt.Sprint("port ", p.Controller),
			instancePath(lockPath, n)} {
			if m, dup := seen[k]; dup {
				t.Errorf("instances %d and %d share %s", m, n, k)
			}
			seen[k] = n
		}
		if len(nw.Bridge) > 15 {
			t.Errorf("instance %d: bridge name %q longer than IFNAMSIZ-1", n, nw.Bridge)
		}
	}
	if NewLayout("/repo").DefaultNetwork() != (Network{Bridge: "kubelet-rh0", CIDR: "198.18.202.1/24"}) || NewLayout("/repo").Ports().API != 26443 {
		t.Error("instance 0 is no longer make rehearsal's kubelet-rh0, 198.18.202.1/24, API port 26443")
	}
}

func TestReuseRefusal(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	fresh := now.Add(20 * time.Hour)
	if why := reuseRefusal(state{Lockdown: clusterLockdown}, fresh, now, "w1"); why != "" {
		t.Errorf("a cluster brought up by rehearsal up: %s", why)
	}
	if why := reuseRefusal(state{Lockdown: clusterLockdown, Workloads: "w1"}, fresh, now, "w1"); why != "" {
		t.Errorf("the same workloads again: %s", why)
	}
	if why := reuseRefusal(state{Lockdown: clusterLockdown, Workloads: "w1"}, fresh, now, ""); why != "" {
		t.Errorf("rehearsal up on a cluster a run used: %s", why)
	}
	if why := reuseRefusal(state{Lockdown: clusterLockdown, Workloads: "w1"}, fresh, now, "w2"); !strings.Contains(why, "other workloads") {
		t.Errorf("other workloads: %q", why)
	}
	if why := reuseRefusal(state{Lockdown: clusterLockdown}, now.Add(2*time.Hour), now, ""); !strings.Contains(why, "expire at 2026-11-27T14:00:00Z") {
		t.Errorf("certificates expiring in 2 h: %q", why)
	}
	if why := reuseRefusal(state{}, fresh, now, ""); !strings.Contains(why, "lockdown 0") {
		t.Errorf("a cluster from before the lockdown: %q", why)
	}
}

func TestWorkloadsDigest(t *testing.T) {
	dir := writeManifests(t, map[string]string{"web.yaml": goodDeployment})
	a, err := WorkloadsDigest(dir, []string{"b:1", "a:1"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := WorkloadsDigest(dir, []string{"a:1", "b:1"}); b != a {
		t.Errorf("image order changed the digest: %s, %s", a, b)
	}
	os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(goodDeployment+"# edited\n"), 0o644)
	if c, _ := WorkloadsDigest(dir, []string{"a:1", "b:1"}); c == a {
		t.Error("an edited manifest kept the digest")
	}
	if d, _ := WorkloadsDigest("", nil); d == a || !strings.HasPrefix(d, "built-in") {
		t.Errorf("built-in workloads: %s", d)
	}
}

func TestCheckImagesFound(t *testing.T) {
	held := map[string]bool{"e2e.local/workload:1": true}
	found := func(ref string) bool { return held[ref] }
	if err := CheckImagesFound([]string{"e2e.local/workload:1", "/some/where.tar", "./x.tar"}, found); err != nil {
		t.Errorf("held names and tarballs: %v", err)
	}
	err := CheckImagesFound([]string{"e2e.local/workload:1", "shop/cart:2.1", "shop/web:3"}, found)
	if err == nil || !strings.Contains(err.Error(), "shop/cart:2.1, shop/web:3") {
		t.Errorf("names no engine holds: %v", err)
	}
}

// A kind at a group/version the chosen control plane's API server no
// longer serves is refused before anything starts, naming the file, the
// kind and what to use; older control planes still take it.
func TestCheckManifestsServedKinds(t *testing.T) {
	ds := "apiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: 'agent:1'}]\n"
	dir := writeManifests(t, map[string]string{"agent.yaml": ds})
	for cp, refused := range map[string]bool{"1.9.11": false, "1.13.12": false, "1.18.6": true} {
		err := CheckManifests(dir, &matrix.Release{Release: cp})
		if !refused {
			if err != nil {
				t.Errorf("control plane %s refused it: %v", cp, err)
			}
			continue
		}
		for _, w := range []string{"agent.yaml (document 1)", "DaemonSet extensions/v1beta1 is not served by the 1.18.6 API server", "use apps/v1"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("control plane %s: error %v does not say %q", cp, err, w)
			}
		}
	}
}

// 1.25 stopped serving batch/v1beta1 CronJobs, policy/v1beta1
// PodDisruptionBudgets and PodSecurityPolicies (and more): refused by the
// 1.25.16 control plane, naming what to use, taken by 1.23.17's.
func TestCheckManifestsRemovedIn125(t *testing.T) {
	docs := map[string]string{
		"cron.yaml": "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n",
		"pdb.yaml":  "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: p}\n",
		"psp.yaml":  "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: s}\n",
	}
	want := map[string]string{"cron.yaml": "CronJob batch/v1beta1 is not served by the 1.25.16 API server (the rehearsal's control plane): use batch/v1",
		"pdb.yaml": "use policy/v1", "psp.yaml": "use Pod Security Admission"}
	for file, content := range docs {
		if err := CheckManifests(writeManifests(t, map[string]string{file: content}), &matrix.Release{Release: "1.23.17"}); err != nil {
			t.Errorf("control plane 1.23.17 refused %s: %v", file, err)
		}
		err := CheckManifests(writeManifests(t, map[string]string{file: content}), &matrix.Release{Release: "1.25.16"})
		if err == nil || !strings.Contains(err.Error(), want[file]) || !strings.Contains(err.Error(), file) {
			t.Errorf("control plane 1.25.16, %s: error %v does not say %q", file, err, want[file])
		}
	}
}

// 1.22 stopped serving the v1beta1 of many kinds (RBAC, CRDs, webhooks,
// ...): a 1.21-era manifest is refused by the 1.22.17 and 1.23.17 control
// planes, naming the version to use, and taken by 1.18.6's.
func TestCheckManifestsRemovedIn122(t *testing.T) {
	crd := "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n"
	rb := "apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: RoleBinding\nmetadata: {name: agent}\n"
	for cp, refused := range map[string]bool{"1.18.6": false, "1.22.17": true, "1.23.17": true} {
		for file, want := range map[string]string{"crd.yaml": "CustomResourceDefinition apiextensions.k8s.io/v1beta1 is not served by the " + cp + " API server (the rehearsal's control plane): use apiextensions.k8s.io/v1", "rb.yaml": "use rbac.authorization.k8s.io/v1"} {
			content := map[string]string{"crd.yaml": crd, "rb.yaml": rb}[file]
			err := CheckManifests(writeManifests(t, map[string]string{file: content}), &matrix.Release{Release: cp})
			switch {
			case !refused && err != nil:
				t.Errorf("control plane %s refused %s: %v", cp, file, err)
			case refused && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file)):
				t.Errorf("control plane %s, %s: error %v does not say %q", cp, file, err, want)
			}
		}
	}
}

// The CI failure this guards against: another checkout's rehearsal left
// up on instance 1 (its state kept) failed the e2e's first rehearsal at
// once; the e2e now passes over it to 1+stride.
func TestFreeInstance(t *testing.T) {
	dir := t.TempDir()
	oldLock, oldOwner := lockPath, ownerPath
	lockPath, ownerPath = filepath.Join(dir, "rehearsal%s.lock"), filepath.Join(dir, "rehearsal%s.owner")
	defer func() { lockPath, ownerPath = oldLock, oldOwner }()
	other, ours := t.TempDir(), t.TempDir()

	if n, skipped, err := FreeInstance(ours, 1, 2); err != nil || n != 1 || len(skipped) != 0 {
		t.Fatalf("nothing taken: instance %d, skipped %q, %v; want 1", n, skipped, err)
	}
	// The other checkout's cluster is up on 1, its process on 3 runs.
	lo := NewLayoutFor(other, 1)
	if err := os.MkdirAll(lo.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lo.Dir, "state.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setClusterOwner(lo, true); err != nil {
		t.Fatal(err)
	}
	unlock, err := LockMachine(NewLayoutFor(other, 3), "rehearsal run")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	n, skipped, err := FreeInstance(ours, 1, 2)
	if err != nil || n != 5 {
		t.Fatalf("instance %d, %v; want 5 (1 and 3 are the other checkout's)", n, err)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0], other) || !strings.Contains(skipped[1], "rehearsal run") {
		t.Errorf("skipped %q: want instance 1 naming %s, instance 3 naming its command", skipped, other)
	}
	// Our own cluster, left up on 7, is ours to reuse or take down.
	lu := NewLayoutFor(ours, 7)
	if err := os.MkdirAll(lu.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lu.Dir, "state.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setClusterOwner(lu, true); err != nil {
		t.Fatal(err)
	}
	if n, _, err := FreeInstance(ours, 7, 2); err != nil || n != 7 {
		t.Fatalf("instance %d (%v); want our own 7", n, err)
	}
	// None left: the error names the one passed over.
	unlock30, err := LockMachine(NewLayoutFor(other, MaxInstance), "rehearsal up")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock30()
	if _, _, err := FreeInstance(ours, MaxInstance, 2); err == nil || !strings.Contains(err.Error(), "no free rehearsal instance") || !strings.Contains(err.Error(), "rehearsal up") {
		t.Errorf("only %d, held: %v", MaxInstance, err)
	}
	if _, _, err := FreeInstance(ours, 0, 1); err == nil {
		t.Error("instance 0 (make rehearsal's) offered to the e2e")
	}
}
