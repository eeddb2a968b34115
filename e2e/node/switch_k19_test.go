package node

import (
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// k19Walk is the releases this file walks.
var k19Walk = []string{"1.9.11", "1.10.13", "1.11.10", "1.12.10"}

// 1.9 -> 1.10 changes the container hash of every container with a
// securityContext (1.10 adds SecurityContext.RunAsGroup, which go-spew
// prints unset too), 1.11 -> 1.12 again (ProcMount); every minor changes
// the static pod UID (the internal Pod graph grows: 1.10 RunAsGroup and
// ShareProcessNamespace, 1.11 ReadinessGates and Sysctls, 1.12
// RuntimeClassName and ProcMount), and 1.11 moves dockershim's sandbox
// checkpoints to the checkpoint manager, whose checksum covers the data
// alone: each vanilla dockershim removes the other's checkpoints.
var _ = Describe("Switching kubelet 1.9 <-> 1.12", Label("upgrade"), kubelets(k19Walk...), SpecPriority(5), func() {
	It("recreates nothing on 1.9.11 -> patched 1.10.13 -> patched 1.11.10 -> patched 1.12.10 and back to patched 1.9.11, containers with a securityContext, static pods without a uid and checkpoints included", func(ctx SpecContext) {
		expectWalkKeepsEverything(ctx, k19Walk, true)
	}, walkTimeout(k19Walk, true))

	It("recreates, with the vanilla 1.10.13 and 1.12.10, exactly the containers with a securityContext and the pod without a uid, and with the vanilla 1.11.10 exactly that pod, as the preflight predicts, logging the changed hash where it changed (negative control)", func(ctx SpecContext) {
		hashChanged := expectVanillaWalkAsPredicted(ctx, k19Walk, func(release string, rep preflightReport, predicted []string) {
			if release == "1.11.10" {
				expectOnlyUnpinnedReplaced(release, rep, predicted)
				return
			}
			want := append(securedContainers(upgradePods("")), "unpinned/app")
			sort.Strings(want)
			Expect(predicted).To(Equal(want), "vanilla %s should be predicted to recreate every container with a securityContext and the pod without a uid", release)
			Expect(rep.uidOf("default/unpinned").VanillaReplaced).To(BeTrue())
			Expect(rep.uidOf("default/unpinned").PodReplaced).To(BeFalse(), "the patched %s should be predicted to keep the pod", release)
		})
		Expect(hashChanged).To(Equal(map[string]bool{"1.10.13": true, "1.11.10": false, "1.12.10": true}))
	}, walkTimeout(k19Walk, false))
})
