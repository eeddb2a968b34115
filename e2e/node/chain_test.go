package node

import (
	"fmt"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// hashChangesAt17To18 lists the app containers (pod/container) whose
// container hash 1.8 computes differently from 1.7: those with a volume
// mount (VolumeMount gained MountPropagation) or a securityContext
// (AllowPrivilegeEscalation), as the committed schema diff says; and every
// container of a pod without metadata.uid, which 1.8 gives another UID.
func hashChangesAt17To18(pods []framework.Pod) []string {
	var out []string
	for _, p := range pods {
		for _, c := range p.Containers {
			mounts, _ := c["volumeMounts"].([]map[string]any)
			_, sc := c["securityContext"]
			if len(mounts) > 0 || sc || p.UID == "" {
				out = append(out, p.Name+"/"+c["name"].(string))
			}
		}
	}
	sort.Strings(out)
	return out
}

// "extended": make test-all runs the walk through 1.8.15; CI runs the
// switches the field reports name (1.7 <-> 1.9, 1.12 <-> 1.13).
var _ = Describe("Switching kubelet 1.7 -> 1.8 -> 1.9 and back", Label("upgrade", "extended"), kubelets("1.7.5", "1.8.15", "1.9.11"), SpecPriority(5), func() {
	It("recreates nothing on the walk 1.7.5 -> patched 1.8.15 -> patched 1.9.11 -> patched 1.8.15 -> 1.7.5", func(ctx SpecContext) {
		node, pods, k, before := runningOn(ctx, "1.7.5")
		Expect(before.data).To(HaveLen(appContainers(pods)), "every app container wrote its data: %v", before.data)
		expectCheckpoints(node, k, before, "1.7.5")
		events, err := node.Docker.WatchEvents(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(events.Stop)

		By("switching to the patched 1.8.15: 1.7.5's containers are kept")
		k = switchTo(ctx, node, "1.8.15", "patched", pods)
		expectSame(ctx, node, before, observe(ctx, node), "1.7.5 -> patched 1.8.15")
		expectCheckpoints(node, k, before, "1.7.5 -> patched 1.8.15")

		By("a new pod under the patched 1.8.15: every later kubelet keeps it")
		late := latePod()
		Expect(node.AddPod(late)).To(Succeed())
		all := append(pods, late)
		waitRunning(ctx, node, all)
		made := observe(ctx, node)
		Expect(made.labels["late/app"]).To(HaveKey(framework.LabelNativeHash("1.8")), "late/app was created by the patched 1.8.15")

		for _, step := range [][2]string{{"1.9.11", "patched"}, {"1.8.15", "patched"}, {"1.7.5", "vanilla"}} {
			what := fmt.Sprintf("-> %s %s", step[0], step[1])
			By("switching " + what + ": everything is kept")
			k = switchTo(ctx, node, step[0], step[1], all)
			expectSame(ctx, node, made, observe(ctx, node), what)
			expectCheckpoints(node, k, made, what)
		}
		evs := events.Events()
		Expect(framework.DestructiveIn(evs, idsOf(before))).To(BeEmpty(), "containers were stopped or removed:\n%s", framework.Summary(evs))
		Expect(createdBesides(evs, idsOf(made))).To(BeEmpty(), "a container was created:\n%s", framework.Summary(evs))
		node.StopKubelet()
	}, SpecTimeout(framework.LongSpec))

	It("recreates, with the vanilla 1.8.15, exactly the containers with a volume mount or a securityContext, and the pod without a uid (negative control)", func(ctx SpecContext) {
		node, pods, _, before := runningOn(ctx, "1.7.5")
		// Of the running app containers (replacedSince's).
		var want []string
		for _, key := range hashChangesAt17To18(pods) {
			if _, ok := before.data[key]; ok {
				want = append(want, key)
			}
		}
		Expect(want).NotTo(BeEmpty(), "no container of the pods reaches a field 1.8 added: this control would prove nothing")
		Expect(len(want)).To(BeNumerically("<", len(before.data)), "every container would change: 1.7 -> 1.8 is then no different from 1.7 -> 1.9")
		k := startKubelet(ctx, node, "1.8.15", "vanilla")
		Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, before) }).
			WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal(want), func() string { return node.Describe(ctx) })
		// And no more after a few syncs.
		waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
		Expect(replacedSince(ctx, node, before)).To(Equal(want), node.Describe(ctx))
		fmt.Fprintf(GinkgoWriter, "vanilla 1.8.15 recreated %d of %d app containers: %v\n", len(want), len(before.data), want)
	}, SpecTimeout(framework.ShortSpec))
})
