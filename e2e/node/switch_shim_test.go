package node

import (
	. "github.com/onsi/ginkgo/v2"
)

// shimWalk is the releases this file walks.
var shimWalk = []string{"1.23.17", "1.24.17", "1.25.16"}

// Leaving dockershim in place: the kubelets of 1.24 and 1.25 run on
// 1.23.17's dockershim, served on its own (make dockershim), so the
// containers, sandboxes and checkpoints are the ones 1.23 made, under the
// same names and labels. The container hash (JSON of the Container) is the
// same 1.23 .. 1.25; the static pod UID is not: 1.24 renames
// ObjectMeta.ClusterName and 1.25 adds PodSecurityContext.HostUsers, so a
// vanilla kubelet replaces every pod without metadata.uid (unpinnedPod)
// at each step, as upstream does (kubernetes#116080).
var _ = Describe("Leaving dockershim: kubelet 1.23 -> 1.24 -> 1.25 on 1.23.17's dockershim, and back", Label("upgrade"), kubelets(shimWalk...), SpecPriority(5), func() {
	It("recreates nothing on the official 1.23.17 -> patched 1.24.17 on the shim -> 1.25.16 -> back to the patched 1.23.17, static pods without a uid included", func(ctx SpecContext) {
		expectWalkKeepsEverything(ctx, shimWalk, true)
	}, walkTimeout(shimWalk, true))

	It("replaces, with the vanilla 1.24.17 and again the vanilla 1.25.16, exactly the pod without a uid, as the preflight predicts (negative control)", func(ctx SpecContext) {
		expectVanillaWalkAsPredicted(ctx, shimWalk, expectOnlyUnpinnedReplaced)
	}, walkTimeout(shimWalk, false))
})
