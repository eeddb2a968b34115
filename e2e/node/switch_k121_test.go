package node

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// k121Walk is the releases this file walks.
var k121Walk = []string{"1.20.15", "1.21.14", "1.22.17", "1.23.17"}

// 1.20 -> 1.21 and 1.22 -> 1.23 keep the container hash (JSON of the
// Container: no field these pods set was added) but not the static pod
// UID: 1.21 hashes the node name and manifest path into it
// (kubernetes#87461) and 1.21 and 1.23 grow the internal Pod graph, so
// every pod without metadata.uid (unpinnedPod) gets another UID from a
// vanilla kubelet, which then replaces the whole pod.
var _ = Describe("Switching kubelet 1.20 <-> 1.23", Label("upgrade"), kubelets(k121Walk...), SpecPriority(5), func() {
	It("recreates nothing on 1.20.15 -> patched 1.21.14 -> 1.22.17 -> 1.23.17 and back, static pods without a uid included", func(ctx SpecContext) {
		expectWalkKeepsEverything(ctx, k121Walk, false)
	}, walkTimeout(k121Walk, true))

	It("replaces, with the vanilla 1.21.14 and again the vanilla 1.23.17, exactly the pod without a uid, as the preflight predicts (negative control)", func(ctx SpecContext) {
		expectVanillaWalkAsPredicted(ctx, k121Walk, func(release string, rep preflightReport, predicted []string) {
			// 1.21 hashes the node name and manifest path into the UID
			// (kubernetes#87461), 1.23 grows the graph; 1.22's changes lie
			// under fields this pod does not set.
			if release == "1.22.17" {
				Expect(predicted).To(BeEmpty(), "vanilla 1.22.17 should be predicted to keep 1.21's UIDs")
				return
			}
			expectOnlyUnpinnedReplaced(release, rep, predicted)
		})
	}, walkTimeout(k121Walk, false))
})
