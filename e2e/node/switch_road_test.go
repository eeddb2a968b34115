package node

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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
	}, walkTimeout(road, true))

	It("recreates, with the vanilla kubelets 1.14.10 .. 1.18.6, what the preflight predicts: containers at 1.13/1.14, 1.14/1.15 and 1.15/1.16 (`Container <name> definition changed, will be restarted`), the pod without a uid at every minor but 1.16/1.17 (negative control)", func(ctx SpecContext) {
		hashChanged := expectVanillaWalkAsPredicted(ctx, road, func(release string, rep preflightReport, predicted []string) {
			if release != "1.17.17" {
				Expect(rep.uidOf("default/unpinned").VanillaReplaced).To(BeTrue(), "vanilla %s should be predicted to replace the pod without a uid", release)
				Expect(rep.uidOf("default/unpinned").PodReplaced).To(BeFalse(), "the patched %s should be predicted to keep the pod", release)
				Expect(predicted).To(ContainElement("unpinned/app"))
			}
			switch release {
			case "1.14.10":
				Expect(predicted).To(ContainElement("shapes/app"), "1.14's SubPathExpr: the container with volume mounts")
			case "1.16.15":
				every := appKeys(rep.Rows, func(r preflightRow) string { return r.ToPatched }, "kept") // all of them, checked
				Expect(predicted).To(Equal(every), "1.16 hashes the JSON: every app container")
			case "1.17.17":
				Expect(predicted).To(BeEmpty(), "1.16 -> 1.17 changes neither hash nor UID")
			}
		})
		// In the kubelet's words: the hash changes at 1.13/1.14, 1.14/1.15
		// (the restricted container's securityContext) and 1.15/1.16.
		Expect(hashChanged).To(Equal(map[string]bool{"1.14.10": true, "1.15.12": true, "1.16.15": true, "1.17.17": false, "1.18.6": false}))
	}, walkTimeout(road, false))
})
