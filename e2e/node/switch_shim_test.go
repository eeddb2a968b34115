package node

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// Leaving dockershim in place: the kubelets of 1.24 and 1.25 run on
// 1.23.17's dockershim, served on its own (make dockershim), so the
// containers, sandboxes and checkpoints are the ones 1.23 made, under the
// same names and labels. The container hash (JSON of the Container) is the
// same 1.23 .. 1.25; the static pod UID is not: 1.24 renames
// ObjectMeta.ClusterName and 1.25 adds PodSecurityContext.HostUsers, so a
// vanilla kubelet replaces every pod without metadata.uid (unpinnedPod)
// at each step, as upstream does (kubernetes#116080).
var _ = Describe("Leaving dockershim: kubelet 1.23 -> 1.24 -> 1.25 on 1.23.17's dockershim, and back", Label("upgrade"), kubelets("1.23.17", "1.24.17", "1.25.16"), SpecPriority(5), func() {
	It("recreates nothing on the official 1.23.17 -> patched 1.24.17 on the shim -> 1.25.16 -> back to the patched 1.23.17, static pods without a uid included", func(ctx SpecContext) {
		expectWalkKeepsEverything(ctx, []string{"1.23.17", "1.24.17", "1.25.16"}, true)
	}, SpecTimeout(framework.LongSpec))

	It("replaces, with the vanilla 1.24.17 and again the vanilla 1.25.16, exactly the pod without a uid, as the preflight predicts (negative control)", func(ctx SpecContext) {
		node, pods, _, before := runningOn(ctx, "1.23.17")
		state, from := before, "1.23.17"
		toPatched := func(r preflightRow) string { return r.ToPatched }
		toVanilla := func(r preflightRow) string { return r.ToVanilla }
		for _, release := range []string{"1.24.17", "1.25.16"} {
			By(fmt.Sprintf("the preflight from %s's node to %s", from, release))
			rep := nodePreflight(ctx, node, release, "--from", from)
			Expect(appKeys(rep.Rows, toPatched, "kept")).To(HaveLen(len(before.data)), "the patched %s should be predicted to keep every app container", release)
			predicted := appKeys(rep.Rows, toVanilla, "recreated")
			Expect(predicted).To(Equal([]string{"unpinned/app"}), "vanilla %s should be predicted to replace exactly the pod without a uid", release)
			Expect(rep.uidOf("default/unpinned").VanillaReplaced).To(BeTrue())
			Expect(rep.uidOf("default/unpinned").PodReplaced).To(BeFalse(), "the patched %s should be predicted to keep the pod", release)

			By(fmt.Sprintf("switching to the vanilla %s on the shim: it replaces what the preflight said", release))
			k := startKubelet(ctx, node, release, "vanilla")
			Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, state) }).
				WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal(predicted), func() string { return node.Describe(ctx) })
			waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
			Expect(replacedSince(ctx, node, state)).To(Equal(predicted), node.Describe(ctx))
			waitRunning(ctx, node, pods)
			now := observe(ctx, node)
			Expect(now.labels["unpinned/app"][framework.LabelPodUID]).NotTo(Equal(state.labels["unpinned/app"][framework.LabelPodUID]), "vanilla %s kept the UID", release)
			fmt.Fprintf(GinkgoWriter, "vanilla %s replaced %v of %d app containers (UID %s -> %s), as the preflight predicted\n", release, predicted, len(before.data),
				state.labels["unpinned/app"][framework.LabelPodUID], now.labels["unpinned/app"][framework.LabelPodUID])
			state, from = now, release
		}
		node.StopKubelet()
	}, SpecTimeout(framework.LongSpec))
})
