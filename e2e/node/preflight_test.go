package node

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// preflightRow is what the spec reads of `toolchain preflight
// --format json` (its JSON field names are an interface).
type preflightRow struct {
	Container  string  `json:"container"`
	Init       bool    `json:"init"`
	StoredHash *uint64 `json:"storedHash"`
	ToVanilla  string  `json:"toVanilla"`
	ToPatched  string  `json:"toPatched"`
}

// preflightUID is what the spec reads of a report's staticPodUIDs.
type preflightUID struct {
	Pod             string `json:"pod"`
	From            string `json:"fromUID"`
	FromNewerGo     string `json:"fromUIDNewerGo"`
	Running         string `json:"runningUID"`
	PodReplaced     bool   `json:"podReplacedByPatched"`
	VanillaReplaced bool   `json:"vanillaPodReplaced"`
}

// preflightReport is what the spec reads of `toolchain preflight
// --format json`.
type preflightReport struct {
	Rows []preflightRow `json:"containers"`
	UIDs []preflightUID `json:"staticPodUIDs"`
}

// uidOf returns the staticPodUIDs entry of namespace/pod.
func (r preflightReport) uidOf(pod string) preflightUID {
	GinkgoHelper()
	for _, u := range r.UIDs {
		if u.Pod == pod {
			return u
		}
	}
	Fail("the preflight reports no UID of " + pod)
	return preflightUID{}
}

// nodePreflight runs the preflight in node mode against the node's engine:
// the hashes the running containers carry, the node's manifests as the
// kubelet reads them.
func nodePreflight(ctx context.Context, node *framework.Node, to string, from ...string) preflightReport {
	GinkgoHelper()
	return preflight(ctx, node, append([]string{"--to", to, "--docker-endpoint", "unix://" + node.Docker.Socket}, from...)...)
}

// filePreflight runs the preflight on the node's manifests alone: what
// FROM's official binary derives, without reading the node.
func filePreflight(ctx context.Context, node *framework.Node, from, to string) preflightReport {
	GinkgoHelper()
	return preflight(ctx, node, "--from", from, "--to", to)
}

func preflight(ctx context.Context, node *framework.Node, args ...string) preflightReport {
	GinkgoHelper()
	args = append([]string{"--root", repoRoot, "preflight", "--pods", node.ManifestDir,
		"--source", "static", "--node-name", framework.NodeName, "--format", "json",
		// As the node's kubelets run (a privileged pod is among the shapes).
		"--allow-privileged", strconv.FormatBool(node.AllowPrivileged)}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "_output", "bin", "toolchain"), args...)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil // "the patched TO would recreate something": the rows say what
	}
	Expect(err).NotTo(HaveOccurred(), "preflight: %s", func() string {
		if ee != nil {
			return string(ee.Stderr)
		}
		return ""
	}())
	var rep preflightReport
	Expect(json.Unmarshal(out, &rep)).To(Succeed(), string(out))
	GinkgoWriter.Printf("preflight %v:\n%s\n", args, out)
	return rep
}

// appKeys turns preflight rows of app containers whose verdict for the
// given side starts with prefix into pod/container keys as the framework
// names containers.
func appKeys(rows []preflightRow, verdict func(preflightRow) string, prefix string) []string {
	var out []string
	for _, r := range rows {
		if r.Init || !strings.HasPrefix(verdict(r), prefix) {
			continue
		}
		// namespace/pod/container -> pod/container
		_, key, _ := strings.Cut(r.Container, "/")
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}

var _ = Describe("Preflight on a live node", Label("upgrade", "preflight", "seed"), kubelets("1.7.5", "1.9.11"), func() {
	It("predicts from the node's hash labels what patched and vanilla 1.9.11 then do to 1.7.5's containers", func(ctx SpecContext) {
		node := newNode(ctx)
		// unpinned has no metadata.uid: vanilla 1.9 derives another UID
		// than 1.7 and replaces the whole pod; the patched 1.9.11 derives
		// 1.7's and keeps it, as the preflight says.
		unpinned := framework.Pod{Name: "unpinned", Containers: []map[string]any{
			framework.Workload("app", dataFile, map[string]any{"env": []map[string]any{{"name": "PORT", "value": "8091"}}}),
		}}
		pods := append(upgradePods(filepath.Join(node.Dir, "host")), unpinned)
		for _, p := range pods {
			Expect(node.AddPod(p)).To(Succeed())
		}
		startKubelet(ctx, node, "1.7.5", "vanilla")
		waitRunning(ctx, node, pods)
		before := observe(ctx, node)

		rows := nodePreflight(ctx, node, "1.9.11").Rows
		for _, r := range rows {
			// Init containers have exited: the node lists running ones only.
			if !r.Init {
				Expect(r.StoredHash).NotTo(BeNil(), "%s: no hash label read from the node", r.Container)
			}
		}
		predictedKept := appKeys(rows, func(r preflightRow) string { return r.ToPatched }, "kept")
		predictedReplaced := appKeys(rows, func(r preflightRow) string { return r.ToPatched }, "recreated")
		predictedRecreated := appKeys(rows, func(r preflightRow) string { return r.ToVanilla }, "recreated")
		vanillaReplaced := appKeys(rows, func(r preflightRow) string { return r.ToVanilla }, "recreated (pod replaced)")
		Expect(predictedKept).To(HaveLen(len(before.data)), "every app container, the unpinned pod's included, should be predicted kept by patched 1.9.11")
		Expect(predictedReplaced).To(BeEmpty(), "nothing should be predicted recreated or replaced by patched 1.9.11")
		Expect(predictedRecreated).To(HaveLen(len(before.data)), "every app container should be predicted recreated by vanilla 1.9.11")
		Expect(vanillaReplaced).To(Equal([]string{"unpinned/app"}), "the unpinned static pod should be predicted replaced by vanilla 1.9.11")

		By("patched 1.9.11 keeps what the preflight said it keeps")
		k := startKubelet(ctx, node, "1.9.11", "patched")
		waitRunning(ctx, node, pods)
		waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
		now := observe(ctx, node)
		var kept []string
		for key := range before.data {
			if now.ids[key] == before.ids[key] {
				kept = append(kept, key)
			}
		}
		sort.Strings(kept)
		Expect(kept).To(Equal(predictedKept), node.Describe(ctx))
		Expect(now.labels["unpinned/app"][framework.LabelPodUID]).To(Equal(before.labels["unpinned/app"][framework.LabelPodUID]),
			"the unpinned pod kept its UID")

		By("vanilla 1.9.11 recreates what the preflight said it recreates")
		startKubelet(ctx, node, "1.9.11", "vanilla")
		Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, before) }).WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal(predictedRecreated), func() string { return node.Describe(ctx) })
		Eventually(ctx, func() (string, error) {
			cs, err := node.Containers(ctx)
			return cs["unpinned/app"].Labels[framework.LabelPodUID], err
		}).WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).ShouldNot(Equal(before.labels["unpinned/app"][framework.LabelPodUID]),
			"vanilla 1.9.11 replaced the unpinned pod by one of another UID")
	}, SpecTimeout(framework.LongSpec))
})

// identityPod is a static pod without metadata.uid whose dump holds what
// depends on the Go release that built the kubelet: its creationTimestamp
// (unset: the zero time.Time) and quantities held as inf.Dec (1.5Gi, 0.5).
func identityPod(name string, port int) framework.Pod {
	return framework.Pod{Name: name, Containers: []map[string]any{
		framework.Workload("app", dataFile, map[string]any{
			"env":       []map[string]any{{"name": "PORT", "value": strconv.Itoa(port)}},
			"resources": map[string]any{"limits": map[string]any{"memory": "1.5Gi", "cpu": "0.5"}},
		}),
	}}
}

var _ = Describe("Static pod identity against the official 1.7 derivation", Label("upgrade", "preflight", "seed"), kubelets("1.7.5", "1.9.11"), func() {
	It("keeps, with the patched 1.9.11, a static pod running under the official 1.7 UID and one running under newer-Go 1.7's, as the preflight predicts", func(ctx SpecContext) {
		node := newNode(ctx)
		official, newerGo := identityPod("official", 8095), identityPod("newergo", 8096)
		pods := []framework.Pod{official, newerGo}
		for _, p := range pods {
			Expect(node.AddPod(p)).To(Succeed())
		}
		// What each 1.7 derivation gives these manifests (the tree tests
		// check both against goldens made from vanilla 1.7.5's own dumps).
		derived := filePreflight(ctx, node, "1.7.5", "1.9.11")
		officialUID, newerGoUID := derived.uidOf("default/official"), derived.uidOf("default/newergo")
		Expect(newerGoUID.FromNewerGo).NotTo(BeEmpty(), "the newer-Go derivation differs for a manifest without creationTimestamp")
		Expect(newerGoUID.FromNewerGo).NotTo(Equal(newerGoUID.From))

		By("1.7.5 runs one pod under the official derivation and one under newer-Go's, as a node that ran an earlier 1.7 build has it")
		// Our 1.7.5 derives the official UID; the newer-Go one is pinned
		// for the first start and unpinned again below.
		pinned := newerGo
		pinned.UID = newerGoUID.FromNewerGo
		Expect(node.AddPod(pinned)).To(Succeed())
		startKubelet(ctx, node, "1.7.5", "vanilla")
		waitRunning(ctx, node, pods)
		before := observe(ctx, node)
		Expect(before.labels["official/app"][framework.LabelPodUID]).To(Equal(officialUID.From), "1.7.5 runs the unpinned pod under the official derivation")
		Expect(before.labels["newergo/app"][framework.LabelPodUID]).To(Equal(newerGoUID.FromNewerGo))
		node.StopKubelet()
		Expect(node.AddPod(newerGo)).To(Succeed())

		// keeps starts a kubelet and checks both pods keep their
		// containers, UIDs and data through its syncs.
		keeps := func(version string) *framework.Kubelet {
			k := startKubelet(ctx, node, version, "patched")
			waitRunning(ctx, node, pods)
			waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
			now := observe(ctx, node)
			for _, key := range []string{"official/app", "newergo/app"} {
				Expect(now.ids[key]).To(Equal(before.ids[key]), "%s was recreated by the patched %s\n%s", key, version, node.Describe(ctx))
				Expect(now.labels[key][framework.LabelPodUID]).To(Equal(before.labels[key][framework.LabelPodUID]), key)
				Expect(now.data[key]).To(Equal(before.data[key]), key)
			}
			return k
		}

		By("the patched 1.7.5 keeps both: a node that ran an earlier 1.7 build switches to it")
		keeps("1.7.5")
		node.StopKubelet()

		By("the preflight reads the running UIDs and predicts both pods kept by the patched 1.9.11, replaced by the vanilla one")
		rep := nodePreflight(ctx, node, "1.9.11", "--from", "1.7.5")
		for pod, running := range map[string]string{"default/official": officialUID.From, "default/newergo": newerGoUID.FromNewerGo} {
			u := rep.uidOf(pod)
			Expect(u.Running).To(Equal(running), pod)
			Expect(u.PodReplaced).To(BeFalse(), "%s: predicted replaced by the patched 1.9.11", pod)
			Expect(u.VanillaReplaced).To(BeTrue(), "%s: predicted kept by the vanilla 1.9.11", pod)
		}
		Expect(appKeys(rep.Rows, func(r preflightRow) string { return r.ToPatched }, "kept")).To(Equal([]string{"newergo/app", "official/app"}))

		By("the patched 1.9.11 keeps both pods, their UIDs and containers")
		k := keeps("1.9.11")
		Expect(k.CountLog("hash changed")).To(BeZero(), k.LogTail(40))

		By("the vanilla 1.9.11 replaces both (negative control)")
		startKubelet(ctx, node, "1.9.11", "vanilla")
		Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, before) }).WithTimeout(2*time.Minute).WithPolling(framework.Poll).
			Should(Equal([]string{"newergo/app", "official/app"}), func() string { return node.Describe(ctx) })
		Eventually(ctx, func() ([]string, error) {
			cs, err := node.Containers(ctx)
			var kept []string
			for _, key := range []string{"newergo/app", "official/app"} {
				if cs[key].Labels[framework.LabelPodUID] == before.labels[key][framework.LabelPodUID] {
					kept = append(kept, key)
				}
			}
			return kept, err
		}).WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).Should(BeEmpty(), "the vanilla 1.9.11 runs both pods under its own UIDs")
	}, SpecTimeout(framework.LongSpec))
})
