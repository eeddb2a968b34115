package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

var repoRoot string

var _ = BeforeSuite(func() {
	var err error
	repoRoot, err = framework.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	// Each parallel process has an engine, ports and a rehearsal
	// instance of its own (e2e/run.sh).
	framework.SetSlot(GinkgoParallelProcess())
})

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// newNode gives the spec an empty node whose every trace is removed when
// the spec ends, failed or not.
func newNode(ctx context.Context) *framework.Node {
	name := strings.Trim(unsafeName.ReplaceAllString(CurrentSpecReport().LeafNodeText, "-"), "-")
	if len(name) > 60 {
		name = name[:60]
	}
	dir, err := os.MkdirTemp("", "e2e-node-")
	Expect(err).NotTo(HaveOccurred())
	logDir := filepath.Join(repoRoot, "_output", "e2e", "logs", name)
	os.RemoveAll(logDir)
	node, err := framework.NewNode(ctx, repoRoot, dir, logDir)
	Expect(err).NotTo(HaveOccurred())
	// Privileged pods are one of the shapes the suites run.
	node.AllowPrivileged = true
	node.Kubelets = labelled(labelKubelet)
	current = node
	DeferCleanup(func(ctx context.Context) {
		current = nil
		Expect(node.Cleanup(ctx)).To(Succeed())
	}, NodeTimeout(2*time.Minute))
	return node
}

// current is the running spec's node, for the failure report.
var current *framework.Node

// A failed spec carries what a node engineer would look at first: the
// node's containers with an inspect of each, the kubelet's and dockerd's
// log tails (in the JUnit report too). It runs before the node's cleanup.
var _ = AfterEach(func(ctx SpecContext) {
	if current == nil || !CurrentSpecReport().Failed() {
		return
	}
	AddReportEntry("containers", current.Describe(ctx))
	if list, err := current.Docker.KubeContainers(ctx); err == nil {
		var b strings.Builder
		for _, c := range list {
			raw, err := current.Docker.InspectRaw(ctx, c.ID)
			if err != nil {
				raw = err.Error()
			}
			fmt.Fprintf(&b, "--- %s %s ---\n%s\n", c.Key(), c.ID, raw)
		}
		AddReportEntry("docker inspect", b.String())
	}
	if k := current.Kubelet(); k != nil {
		AddReportEntry("kubelet log", k.LogTail(120))
	}
	AddReportEntry("dockerd log", framework.TailFile(framework.EngineLog(repoRoot), 80))
}, NodeTimeout(2*time.Minute))

// startKubelet starts release+variant on the node and waits for healthz.
func startKubelet(ctx context.Context, node *framework.Node, release, variant string) *framework.Kubelet {
	By(fmt.Sprintf("starting kubelet %s %s", release, variant))
	k, err := node.Start(release, variant)
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, func() bool {
		if done, err := k.Exited(); done {
			StopTrying(fmt.Sprintf("kubelet exited: %v\n%s", err, k.LogTail(40))).Now()
		}
		return k.Healthy(ctx)
	}).WithTimeout(60*time.Second).WithPolling(framework.Poll).Should(BeTrue(), func() string { return k.LogTail(40) })
	return k
}

// waitRunning waits until every container of every pod runs, as the
// engine sees it (the read-only port of 1.7/1.9 reports no status in
// standalone mode).
func waitRunning(ctx context.Context, node *framework.Node, pods []framework.Pod) {
	Eventually(ctx, func() error {
		cs, err := node.Containers(ctx)
		if err != nil {
			return err
		}
		for _, p := range pods {
			for _, c := range p.Containers {
				key := p.Name + "/" + c["name"].(string)
				if cs[key].State != "running" {
					return fmt.Errorf("%s is not running (%q)", key, cs[key].State)
				}
			}
		}
		return nil
	}).WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).Should(Succeed(), func() string { return node.Describe(ctx) })
}

// waitSyncs waits until the kubelet has logged n periodic syncs of every
// pod (each compares every container's stored hash with its spec; PLEG
// relists every second in between) and at least one liveness window has
// passed since it started, so whatever the switch provoked has happened
// before the phase is judged.
func waitSyncs(ctx context.Context, k *framework.Kubelet, pods []framework.Pod, n int) time.Duration {
	start := time.Now()
	Eventually(ctx, func() error {
		if since := time.Since(k.Started()); since < framework.LivenessWindow+framework.SyncFrequency {
			return fmt.Errorf("only %s since kubelet start", since.Round(time.Second))
		}
		syncs := k.PodSyncs()
		for _, p := range pods {
			if syncs[p.Name] < n {
				return fmt.Errorf("pod %s synced %d times, want %d", p.Name, syncs[p.Name], n)
			}
		}
		return nil
	}).WithTimeout(time.Duration(n+4)*framework.SyncFrequency+framework.LivenessWindow+30*time.Second).WithPolling(framework.Poll).
		Should(Succeed(), func() string { return k.LogTail(30) })
	return time.Since(start)
}

// replacedSince lists the app containers of before (pod/container) whose
// id is no longer the one they had.
func replacedSince(ctx context.Context, node *framework.Node, before state) ([]string, error) {
	now, err := node.Containers(ctx)
	var replaced []string
	for key := range before.data {
		if now[key].ID != before.ids[key] {
			replaced = append(replaced, key)
		}
	}
	sort.Strings(replaced)
	return replaced, err
}

// createdBesides lists the create events of containers other than known.
// A spec checks "nothing created since" this way rather than by counting
// events up to a mark: the engine's events reach the watcher a moment
// after the containers a spec has already observed running.
func createdBesides(evs []framework.Event, known map[string]bool) []framework.Event {
	var out []framework.Event
	for _, e := range evs {
		if e.Action == "create" && !known[e.ID] {
			out = append(out, e)
		}
	}
	return out
}

// The build targets a spec runs are its labels: e2e/run.sh builds, before
// the run, the kubelets and control planes its specs are labelled with
// (toolchain e2e-targets), and make test-release VERSION=x runs every spec
// labelled with x. A spec that starts a kubelet or control plane it is not
// labelled with fails (framework.Node.Kubelets, rehearse).
const (
	labelKubelet      = "kubelet"
	labelControlPlane = "control-plane"
)

// kubelets labels a container or spec with the releases whose kubelets
// (either variant) it starts.
func kubelets(releases ...string) Labels {
	var l Labels
	for _, r := range releases {
		l = append(l, labelKubelet+":"+r)
	}
	return l
}

// controlPlane labels a rehearsal with its control plane's release.
func controlPlane(release string) Labels { return Labels{labelControlPlane + ":" + release} }

// labelled lists the running spec's releases labelled key, as kubelets
// and controlPlane write them.
func labelled(key string) []string {
	out := []string{} // none labelled: none may run

	for _, l := range CurrentSpecReport().Labels() {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			out = append(out, v)
		}
	}
	return out
}

// expectLabelled fails the spec unless it is labelled key:release for each.
func expectLabelled(key string, releases ...string) {
	GinkgoHelper()
	for _, r := range releases {
		Expect(labelled(key)).To(ContainElement(r), "the spec runs %s %s but is not labelled %s:%s (e2e/run.sh builds only what the selected specs are labelled with)", key, r, key, r)
	}
}
