package node

import (
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// k111Walk is the releases this file walks.
var k111Walk = []string{"1.11.10", "1.12.10"}

// 1.11 -> 1.12 changes the container hash of every container with a
// securityContext (1.12 adds SecurityContext.ProcMount, which go-spew
// prints unset too) and the static pod UID (1.12 adds
// PodSpec.RuntimeClassName, SecurityContext.ProcMount and
// PersistentVolumeClaimSpec.DataSource to the internal Pod graph), so a
// vanilla switch recreates the first and replaces every pod without
// metadata.uid, both ways.
var _ = Describe("Switching kubelet 1.11 <-> 1.12", Label("upgrade"), kubelets(k111Walk...), SpecPriority(5), func() {
	It("recreates nothing on 1.11.10 -> patched 1.12.10 and back to patched 1.11.10, containers with a securityContext, static pods without a uid and checkpoints included", func(ctx SpecContext) {
		expectWalkKeepsEverything(ctx, k111Walk, true)
	}, walkTimeout(k111Walk, true))

	It("recreates, with the vanilla 1.12.10, exactly the containers with a securityContext and the pod without a uid, as the preflight predicts, logging the changed hash (negative control)", func(ctx SpecContext) {
		hashChanged := expectVanillaWalkAsPredicted(ctx, k111Walk, func(release string, rep preflightReport, predicted []string) {
			want := append(securedContainers(upgradePods("")), "unpinned/app")
			sort.Strings(want)
			Expect(predicted).To(Equal(want), "vanilla %s should be predicted to recreate every container with a securityContext and the pod without a uid", release)
			Expect(rep.uidOf("default/unpinned").VanillaReplaced).To(BeTrue())
			Expect(rep.uidOf("default/unpinned").PodReplaced).To(BeFalse(), "the patched %s should be predicted to keep the pod", release)
		})
		Expect(hashChanged).To(Equal(map[string]bool{"1.12.10": true}))
	}, walkTimeout(k111Walk, false))
})

// securedContainers are the pod/container keys of pods' long-running
// containers that set a securityContext, read off the specs.
func securedContainers(pods []framework.Pod) []string {
	var out []string
	for _, p := range pods {
		for _, c := range p.Containers {
			if _, ok := c["securityContext"]; ok {
				out = append(out, p.Name+"/"+c["name"].(string))
			}
		}
	}
	return out
}
