package node

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// 1.12 -> 1.13 keeps the container hash (the Container type graph is the
// same) but not the static pod UID: 1.13 defaults PodSpec.EnableServiceLinks,
// so every pod without metadata.uid (unpinnedPod) gets another UID from a
// vanilla 1.13 kubelet, which then replaces the whole pod.
var _ = Describe("Switching kubelet 1.12 <-> 1.13", Label("upgrade"), kubelets("1.12.10", "1.13.12"), func() {
	It("recreates nothing on 1.12.10 -> patched 1.13.12 -> 1.12.10, static pods without a uid included", func(ctx SpecContext) {
		node, pods, k, before := runningOn(ctx, "1.12.10")
		Expect(before.data).To(HaveLen(appContainers(pods)), "every app container wrote its data: %v", before.data)
		expectCheckpoints(node, k, before, "1.12.10")
		events, err := node.Docker.WatchEvents(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(events.Stop)

		By("switching to the patched 1.13.12: 1.12.10's pods are kept, the one without a uid too")
		k = switchTo(ctx, node, "1.13.12", "patched", pods)
		expectSame(ctx, node, before, observe(ctx, node), "1.12.10 -> patched 1.13.12")
		expectCheckpoints(node, k, before, "1.12.10 -> patched 1.13.12")

		By("a new pod without a uid under the patched 1.13.12: it gets 1.12's UID, so 1.12.10 keeps it")
		late := unpinnedLatePod()
		Expect(node.AddPod(late)).To(Succeed())
		all := append(pods, late)
		waitRunning(ctx, node, all)
		made := observe(ctx, node)

		By("switching back to 1.12.10: everything is kept")
		k = switchTo(ctx, node, "1.12.10", "vanilla", all)
		after := observe(ctx, node)
		expectSame(ctx, node, made, after, "patched 1.13.12 -> 1.12.10")
		Expect(after.labels["unpinned-late/app"][framework.LabelPodUID]).To(Equal(made.labels["unpinned-late/app"][framework.LabelPodUID]), "the late pod without a uid got another UID from 1.12.10")
		expectCheckpoints(node, k, made, "patched 1.13.12 -> 1.12.10")
		evs := events.Events()
		Expect(framework.DestructiveIn(evs, idsOf(before))).To(BeEmpty(), "containers were stopped or removed:\n%s", framework.Summary(evs))
		Expect(createdBesides(evs, idsOf(made))).To(BeEmpty(), "a container was created:\n%s", framework.Summary(evs))
		node.StopKubelet()
	}, SpecTimeout(framework.LongSpec))

	It("replaces, with the vanilla 1.13.12, exactly the pod without a uid (negative control); the patched 1.13.12 then keeps it under 1.13's UID", func(ctx SpecContext) {
		node, pods, _, before := runningOn(ctx, "1.12.10")
		want := []string{"unpinned/app"}
		k := startKubelet(ctx, node, "1.13.12", "vanilla")
		Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, before) }).
			WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal(want), func() string { return node.Describe(ctx) })
		waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
		Expect(replacedSince(ctx, node, before)).To(Equal(want), node.Describe(ctx))
		waitRunning(ctx, node, pods)
		under113 := observe(ctx, node)
		Expect(under113.labels["unpinned/app"][framework.LabelPodUID]).NotTo(Equal(before.labels["unpinned/app"][framework.LabelPodUID]), "vanilla 1.13.12 kept 1.12's UID")
		fmt.Fprintf(GinkgoWriter, "vanilla 1.13.12 replaced %v of %d app containers (UID %s -> %s)\n", want, len(before.data),
			before.labels["unpinned/app"][framework.LabelPodUID], under113.labels["unpinned/app"][framework.LabelPodUID])

		By("an operator on 1.13 installing the patched 1.13.12 (for the inspect deadlines) keeps the pod 1.13 started")
		events, err := node.Docker.WatchEvents(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(events.Stop)
		switchTo(ctx, node, "1.13.12", "patched", pods)
		expectSame(ctx, node, under113, observe(ctx, node), "vanilla 1.13.12 -> patched 1.13.12")
		evs := events.Events()
		Expect(framework.DestructiveIn(evs, idsOf(under113))).To(BeEmpty(), "containers were stopped or removed:\n%s", framework.Summary(evs))
		node.StopKubelet()
	}, SpecTimeout(framework.LongSpec))
})

// unpinnedLatePod is a second pod without metadata.uid, created while the
// patched 1.13.12 runs.
func unpinnedLatePod() framework.Pod {
	return framework.Pod{Name: "unpinned-late", Containers: []map[string]any{
		framework.Workload("app", dataFile, map[string]any{"env": []map[string]any{{"name": "PORT", "value": "8092"}}}),
	}}
}
