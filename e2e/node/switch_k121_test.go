package node

import (
	"fmt"
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
var _ = Describe("Switching kubelet 1.20 <-> 1.23", Label("upgrade"), SpecPriority(5), func() {
	It("recreates nothing on 1.20.15 -> patched 1.21.14 -> 1.22.17 -> 1.23.17 and back, static pods without a uid included", func(ctx SpecContext) {
		node, pods, k, before := runningOn(ctx, "1.20.15")
		Expect(before.data).To(HaveLen(appContainers(pods)), "every app container wrote its data: %v", before.data)
		expectCheckpoints(node, k, before, "1.20.15")
		events, err := node.Docker.WatchEvents(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(events.Stop)
		uid := before.labels["unpinned/app"][framework.LabelPodUID]

		for _, release := range []string{"1.21.14", "1.22.17", "1.23.17"} {
			By(fmt.Sprintf("switching to the patched %s: 1.20.15's pods are kept, the one without a uid too", release))
			k = switchTo(ctx, node, release, "patched", pods)
			expectSame(ctx, node, before, observe(ctx, node), "-> patched "+release)
			expectCheckpoints(node, k, before, "-> patched "+release)
			// What the kubelet decided, in its words (staticuid.Pick).
			Expect(k.CountLog(fmt.Sprintf("UID %s as 1.20 derives it (its sandbox runs with it", uid))).NotTo(BeZero(), k.LogTail(40))
		}

		By("a new pod without a uid under the patched 1.23.17: it gets 1.23's UID, and the patched 1.22.17 and 1.21.14 keep it")
		late := unpinnedLatePod()
		Expect(node.AddPod(late)).To(Succeed())
		all := append(pods, late)
		waitRunning(ctx, node, all)
		made := observe(ctx, node)
		for _, release := range []string{"1.22.17", "1.21.14"} {
			By(fmt.Sprintf("switching back to the patched %s: everything is kept", release))
			k = switchTo(ctx, node, release, "patched", all)
			expectSame(ctx, node, made, observe(ctx, node), "-> patched "+release)
			expectCheckpoints(node, k, made, "-> patched "+release)
		}
		evs := events.Events()
		Expect(framework.DestructiveIn(evs, idsOf(before))).To(BeEmpty(), "containers were stopped or removed:\n%s", framework.Summary(evs))
		Expect(createdBesides(evs, idsOf(made))).To(BeEmpty(), "a container was created:\n%s", framework.Summary(evs))

		// The rollback to the official 1.20.15 keeps what 1.20 started;
		// the late pod runs under 1.23's UID, which 1.20 cannot derive
		// (no 1.20 kubelet knows later graphs): it alone is replaced, as
		// docs/fixes.md says.
		By("switching back to the official 1.20.15: only the pod the patched 1.23.17 started is replaced")
		k = startKubelet(ctx, node, "1.20.15", "vanilla")
		Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, made) }).
			WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal([]string{"unpinned-late/app"}), func() string { return node.Describe(ctx) })
		waitSyncs(ctx, k, all, framework.SyncsPerPhase)
		Expect(replacedSince(ctx, node, made)).To(Equal([]string{"unpinned-late/app"}), node.Describe(ctx))
		node.StopKubelet()
	}, SpecTimeout(framework.LongSpec))

	It("replaces, with the vanilla 1.21.14 and again the vanilla 1.23.17, exactly the pod without a uid (negative control)", func(ctx SpecContext) {
		node, pods, _, before := runningOn(ctx, "1.20.15")
		want := []string{"unpinned/app"}
		state := before
		for _, release := range []string{"1.21.14", "1.22.17", "1.23.17"} {
			By(fmt.Sprintf("switching to the vanilla %s", release))
			k := startKubelet(ctx, node, release, "vanilla")
			if release == "1.22.17" {
				// 1.21 and 1.22 derive the same UID for this pod (the
				// graph's changes lie under fields it does not set).
				waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
				Expect(replacedSince(ctx, node, state)).To(BeEmpty(), node.Describe(ctx))
				continue
			}
			Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, state) }).
				WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal(want), func() string { return node.Describe(ctx) })
			waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
			Expect(replacedSince(ctx, node, state)).To(Equal(want), node.Describe(ctx))
			waitRunning(ctx, node, pods)
			now := observe(ctx, node)
			Expect(now.labels["unpinned/app"][framework.LabelPodUID]).NotTo(Equal(state.labels["unpinned/app"][framework.LabelPodUID]), "vanilla %s kept the UID", release)
			fmt.Fprintf(GinkgoWriter, "vanilla %s replaced %v of %d app containers (UID %s -> %s)\n", release, want, len(before.data),
				state.labels["unpinned/app"][framework.LabelPodUID], now.labels["unpinned/app"][framework.LabelPodUID])
			state = now
		}
		node.StopKubelet()
	}, SpecTimeout(framework.LongSpec))
})
