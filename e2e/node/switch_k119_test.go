package node

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// k119Walk is the releases this file walks.
var k119Walk = []string{"1.18.6", "1.19.16", "1.20.15"}

// 1.18 -> 1.19 keeps the container hash of these pods (the JSON of the
// Container: 1.19's SecurityContext.SeccompProfile is unset in them) but
// not the static pod UID: 1.19 adds PodSpec.SetHostnameAsFQDN and
// PodSecurityContext.SeccompProfile to the internal Pod graph, so every
// pod without metadata.uid (unpinnedPod) gets another UID from a vanilla
// kubelet, which then replaces the whole pod. 1.19 -> 1.20 changes
// neither (one graph; the node name and manifest path enter the UID at
// 1.21).
var _ = Describe("Switching kubelet 1.18 <-> 1.20", Label("upgrade"), kubelets(k119Walk...), SpecPriority(5), func() {
	It("recreates nothing on 1.18.6 -> patched 1.19.16 -> patched 1.20.15 and back to patched 1.18.6, static pods without a uid and checkpoints included", func(ctx SpecContext) {
		expectWalkKeepsEverything(ctx, k119Walk, true)
	}, walkTimeout(k119Walk, true))

	It("replaces, with the vanilla 1.19.16, exactly the pod without a uid, and with the vanilla 1.20.15 nothing, as the preflight predicts; neither logs a changed container hash (negative control)", func(ctx SpecContext) {
		hashChanged := expectVanillaWalkAsPredicted(ctx, k119Walk, func(release string, rep preflightReport, predicted []string) {
			if release == "1.20.15" {
				Expect(predicted).To(BeEmpty(), "vanilla 1.20.15 should be predicted to keep 1.19's hashes and UIDs")
				return
			}
			expectOnlyUnpinnedReplaced(release, rep, predicted)
		})
		Expect(hashChanged).To(Equal(map[string]bool{"1.19.16": false, "1.20.15": false}))
	}, walkTimeout(k119Walk, false))
})
