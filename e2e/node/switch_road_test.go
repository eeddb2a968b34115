package node

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// The road 1.13 -> 1.18 changes the container hash three times (1.14
// VolumeMount.SubPathExpr, 1.15 SecurityContext.WindowsOptions, 1.16 the
// JSON of the container instead of its go-spew dump) and the static pod
// UID at every minor but 1.16 -> 1.17, and 1.14's PortMapping.HostIP
// changes the checksum of the checkpoints of pods with ports: a vanilla
// kubelet recreates what another release of the road started.
var road = []string{"1.13.12", "1.14.10", "1.15.12", "1.16.15", "1.17.17", "1.18.6"}

var _ = Describe("Switching kubelet along the road 1.13 <-> 1.18", Label("upgrade"), kubelets(road...), SpecPriority(5), func() {
	It("recreates nothing on 1.13.12 -> patched 1.14.10 -> patched 1.15.12 -> patched 1.16.15 -> patched 1.17.17 -> patched 1.18.6 and back to 1.13.12, static pods without a uid and checkpoints included", func(ctx SpecContext) {
		expectWalkKeepsEverything(ctx, road, true)
	}, SpecTimeout(framework.LongSpec))

	It("recreates, with the vanilla kubelets 1.14.10 .. 1.18.6, what the preflight predicts: containers at 1.13/1.14, 1.14/1.15 and 1.15/1.16 (`Container <name> definition changed, will be restarted`), the pod without a uid at every minor but 1.16/1.17 (negative control)", func(ctx SpecContext) {
		node, pods, _, before := runningOn(ctx, "1.13.12")
		state, from := before, "1.13.12"
		toPatched := func(r preflightRow) string { return r.ToPatched }
		toVanilla := func(r preflightRow) string { return r.ToVanilla }
		hashChanged := map[string]bool{}
		for _, release := range road[1:] {
			By(fmt.Sprintf("the preflight from %s's node to %s", from, release))
			rep := nodePreflight(ctx, node, release, "--from", from)
			Expect(appKeys(rep.Rows, toPatched, "kept")).To(HaveLen(len(before.data)), "the patched %s should be predicted to keep every app container", release)
			predicted := appKeys(rep.Rows, toVanilla, "recreated")
			if release != "1.17.17" {
				Expect(rep.uidOf("default/unpinned").VanillaReplaced).To(BeTrue(), "vanilla %s should be predicted to replace the pod without a uid", release)
				Expect(rep.uidOf("default/unpinned").PodReplaced).To(BeFalse(), "the patched %s should be predicted to keep the pod", release)
				Expect(predicted).To(ContainElement("unpinned/app"))
			}
			switch release {
			case "1.14.10":
				Expect(predicted).To(ContainElement("shapes/app"), "1.14's SubPathExpr: the container with volume mounts")
			case "1.16.15":
				Expect(predicted).To(HaveLen(len(before.data)), "1.16 hashes the JSON: every app container")
			case "1.17.17":
				Expect(predicted).To(BeEmpty(), "1.16 -> 1.17 changes neither hash nor UID")
			}

			By(fmt.Sprintf("switching to the vanilla %s: it recreates what the preflight said", release))
			k := startKubelet(ctx, node, release, "vanilla")
			if len(predicted) > 0 {
				Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, state) }).
					WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal(predicted), func() string { return node.Describe(ctx) })
			}
			waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
			Expect(replacedSince(ctx, node, state)).To(Equal(predicted), node.Describe(ctx))
			// 1.14 .. 1.18 log a changed hash so (1.13: "Container spec
			// hash changed").
			hashChanged[release] = k.CountLog("definition changed, will be restarted") > 0
			waitRunning(ctx, node, pods)
			fmt.Fprintf(GinkgoWriter, "vanilla %s -> %s recreated %d of %d app containers %v, as the preflight predicted\n", from, release, len(predicted), len(before.data), predicted)
			state, from = observe(ctx, node), release
		}
		// In the kubelet's words: the hash changes at 1.13/1.14, 1.14/1.15
		// (the restricted container's securityContext) and 1.15/1.16.
		Expect(hashChanged).To(Equal(map[string]bool{"1.14.10": true, "1.15.12": true, "1.16.15": true, "1.17.17": false, "1.18.6": false}))
		node.StopKubelet()
	}, SpecTimeout(framework.LongSpec))
})
