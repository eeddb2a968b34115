package node

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// 1.20 -> 1.21 and 1.22 -> 1.23 keep the container hash (JSON of the
// Container: no field these pods set was added) but not the static pod
// UID: 1.21 hashes the node name and manifest path into it
// (kubernetes#87461) and 1.21 and 1.23 grow the internal Pod graph, so
// every pod without metadata.uid (unpinnedPod) gets another UID from a
// vanilla kubelet, which then replaces the whole pod.
var _ = Describe("Switching kubelet 1.20 <-> 1.23", Label("upgrade"), kubelets("1.20.15", "1.21.14", "1.22.17", "1.23.17"), SpecPriority(5), func() {
	It("recreates nothing on 1.20.15 -> patched 1.21.14 -> 1.22.17 -> 1.23.17 and back, static pods without a uid included", func(ctx SpecContext) {
		expectWalkKeepsEverything(ctx, []string{"1.20.15", "1.21.14", "1.22.17", "1.23.17"}, false)
	}, SpecTimeout(framework.LongSpec))

	It("replaces, with the vanilla 1.21.14 and again the vanilla 1.23.17, exactly the pod without a uid, as the preflight predicts (negative control)", func(ctx SpecContext) {
		node, pods, _, before := runningOn(ctx, "1.20.15")
		state, from := before, "1.20.15"
		toPatched := func(r preflightRow) string { return r.ToPatched }
		toVanilla := func(r preflightRow) string { return r.ToVanilla }
		for _, release := range []string{"1.21.14", "1.22.17", "1.23.17"} {
			By(fmt.Sprintf("the preflight from %s's node to %s", from, release))
			rep := nodePreflight(ctx, node, release, "--from", from)
			Expect(appKeys(rep.Rows, toPatched, "kept")).To(HaveLen(len(before.data)), "the patched %s should be predicted to keep every app container", release)
			predicted := appKeys(rep.Rows, toVanilla, "recreated")
			// 1.21 hashes the node name and manifest path into the UID
			// (kubernetes#87461), 1.23 grows the graph; 1.22's changes lie
			// under fields this pod does not set.
			if release == "1.22.17" {
				Expect(predicted).To(BeEmpty(), "vanilla 1.22.17 should be predicted to keep 1.21's UIDs")
			} else {
				Expect(predicted).To(Equal([]string{"unpinned/app"}), "vanilla %s should be predicted to replace exactly the pod without a uid", release)
				Expect(rep.uidOf("default/unpinned").VanillaReplaced).To(BeTrue())
				Expect(rep.uidOf("default/unpinned").PodReplaced).To(BeFalse(), "the patched %s should be predicted to keep the pod", release)
			}

			By(fmt.Sprintf("switching to the vanilla %s: it replaces what the preflight said", release))
			k := startKubelet(ctx, node, release, "vanilla")
			if len(predicted) > 0 {
				Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, state) }).
					WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal(predicted), func() string { return node.Describe(ctx) })
			}
			waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
			Expect(replacedSince(ctx, node, state)).To(Equal(predicted), node.Describe(ctx))
			waitRunning(ctx, node, pods)
			now := observe(ctx, node)
			if len(predicted) > 0 {
				Expect(now.labels["unpinned/app"][framework.LabelPodUID]).NotTo(Equal(state.labels["unpinned/app"][framework.LabelPodUID]), "vanilla %s kept the UID", release)
				fmt.Fprintf(GinkgoWriter, "vanilla %s replaced %v of %d app containers (UID %s -> %s), as the preflight predicted\n", release, predicted, len(before.data),
					state.labels["unpinned/app"][framework.LabelPodUID], now.labels["unpinned/app"][framework.LabelPodUID])
			}
			state, from = now, release
		}
		node.StopKubelet()
	}, SpecTimeout(framework.LongSpec))
})

// expectWalkKeepsEverything runs the patched walk both roads share: the
// pods started by the official walk[0] are kept by each patched kubelet up
// the walk (the pod without a uid under walk[0]'s UID, in the kubelet's
// words), a pod without a uid made under the last one is kept by each
// patched kubelet back down (down to the patched walk[0] too when
// patchedFirst: it is on the road), no container is stopped or created,
// and the official walk[0] after them replaces exactly that late pod: no
// official kubelet derives later releases' UIDs (docs/fixes.md).
func expectWalkKeepsEverything(ctx SpecContext, walk []string, patchedFirst bool) {
	GinkgoHelper()
	first, last := walk[0], walk[len(walk)-1]
	node, pods, k, before := runningOn(ctx, first)
	Expect(before.data).To(HaveLen(appContainers(pods)), "every app container wrote its data: %v", before.data)
	expectCheckpoints(node, k, before, first)
	events, err := node.Docker.WatchEvents(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(events.Stop)
	uid := before.labels["unpinned/app"][framework.LabelPodUID]
	firstMinor := first[:strings.LastIndex(first, ".")]

	for _, release := range walk[1:] {
		By(fmt.Sprintf("switching to the patched %s: %s's pods are kept, the one without a uid too", release, first))
		k = switchTo(ctx, node, release, "patched", pods)
		expectSame(ctx, node, before, observe(ctx, node), "-> patched "+release)
		expectCheckpoints(node, k, before, "-> patched "+release)
		// What the kubelet decided, in its words (staticuid.Pick).
		Expect(k.CountLog(fmt.Sprintf("UID %s as %s derives it (its sandbox runs with it", uid, firstMinor))).NotTo(BeZero(), k.LogTail(40))
	}

	By(fmt.Sprintf("a new pod without a uid under the patched %s: it gets %s's UID, and the patched kubelets down the walk keep it", last, last))
	late := unpinnedLatePod()
	Expect(node.AddPod(late)).To(Succeed())
	all := append(pods, late)
	waitRunning(ctx, node, all)
	made := observe(ctx, node)
	down := slices.Clone(walk[1 : len(walk)-1])
	if patchedFirst {
		down = slices.Clone(walk[:len(walk)-1])
	}
	slices.Reverse(down)
	for _, release := range down {
		By(fmt.Sprintf("switching back to the patched %s: everything is kept", release))
		k = switchTo(ctx, node, release, "patched", all)
		expectSame(ctx, node, made, observe(ctx, node), "-> patched "+release)
		expectCheckpoints(node, k, made, "-> patched "+release)
	}
	evs := events.Events()
	Expect(framework.DestructiveIn(evs, idsOf(before))).To(BeEmpty(), "containers were stopped or removed:\n%s", framework.Summary(evs))
	Expect(createdBesides(evs, idsOf(made))).To(BeEmpty(), "a container was created:\n%s", framework.Summary(evs))

	By(fmt.Sprintf("switching back to the official %s: only the pod the patched %s started is replaced", first, last))
	k = startKubelet(ctx, node, first, "vanilla")
	Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, made) }).
		WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal([]string{"unpinned-late/app"}), func() string { return node.Describe(ctx) })
	waitSyncs(ctx, k, all, framework.SyncsPerPhase)
	Expect(replacedSince(ctx, node, made)).To(Equal([]string{"unpinned-late/app"}), node.Describe(ctx))
	node.StopKubelet()
}
