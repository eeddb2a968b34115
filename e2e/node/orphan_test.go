package node

import (
	"context"
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

const orphanError = "no PodsandBox found with Id"

// orphanNode runs two pods on a kubelet, then, with kubelet stopped,
// removes one pod's sandbox container and its dockershim checkpoint (its
// manifest too: the pod is gone) and starts kubelet again. The workload
// container of that pod is left behind: an orphan.
func orphanNode(ctx context.Context, release, variant string) (*framework.Node, *framework.Kubelet, map[string]framework.Container, string, *framework.EventLog) {
	node := newNode(ctx)
	victim := hangPod("victim", "e2e-orphan-victim-0001", "8081")
	bystander := hangPod("bystander", "e2e-orphan-bystander-0001", "8082")
	Expect(node.AddPod(victim)).To(Succeed())
	Expect(node.AddPod(bystander)).To(Succeed())
	startKubelet(ctx, node, release, variant)
	waitRunning(ctx, node, []framework.Pod{victim, bystander})
	before, err := node.Containers(ctx)
	Expect(err).NotTo(HaveOccurred())
	node.StopKubelet()

	By("removing victim's sandbox container and checkpoint, leaving its workload container")
	sandbox := before["victim/POD"].ID
	Expect(node.RemovePod("victim")).To(Succeed())
	Expect(node.Docker.RemoveContainer(ctx, sandbox)).To(Succeed())
	Expect(os.Remove(node.Checkpoint(sandbox))).To(Succeed())
	events, err := node.Docker.WatchEvents(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(events.Stop)
	k, err := node.Start(release, variant)
	Expect(err).NotTo(HaveOccurred())
	return node, k, before, sandbox, events
}

// patchSkipLine is how our patch (1.18.6 .. 1.22.17) says it
// skipped an orphan.
func patchSkipLine(orphan, sandbox string) string {
	return fmt.Sprintf("Skipping container %q (app): no PodSandbox found with Id %q", orphan, sandbox)
}

// tolerantKubelets are the builds that must start with an orphan and
// remove it, with the line that says they skipped it: our patch on 1.18.6
// .. 1.22.17, upstream's (kubernetes#108325, in 1.23.14 and
// later) on vanilla 1.23.17. By docs/e2e.md's rule CI runs 1.18.6's (the
// field report's release, a seed), make test-all the others ("extended").
var tolerantKubelets = []struct {
	release, variant string
	skipLine         func(orphan, sandbox string) string
	labels           []string
}{
	{"1.18.6", "patched", patchSkipLine, []string{"seed"}},
	{"1.19.16", "patched", patchSkipLine, []string{"extended"}},
	{"1.20.15", "patched", patchSkipLine, []string{"extended"}},
	{"1.21.14", "patched", patchSkipLine, []string{"extended"}},
	{"1.22.17", "patched", patchSkipLine, []string{"extended"}},
	{"1.23.17", "vanilla", func(orphan, sandbox string) string {
		return fmt.Sprintf(`"no PodSandBox found for the container" podSandboxId=%q containerName="app" containerId=%q`, sandbox, orphan)
	}, []string{"extended"}},
}

// exitingKubelets are the vanilla builds that exit on an orphan (1.18 ..
// 1.22 and 1.23.0 .. 1.23.13), the fix's negative controls.
var exitingKubelets = []struct {
	release string
	labels  []string
}{{"1.18.6", []string{"seed"}}, {"1.19.16", []string{"extended"}}, {"1.20.15", []string{"extended"}}, {"1.21.14", []string{"extended"}}, {"1.22.17", []string{"extended"}}}

var _ = Describe("An orphaned container at kubelet start", Label("orphan"), func() {
	for _, tk := range tolerantKubelets {
		It(fmt.Sprintf("does not stop the %s %s from starting, and goes away", tk.variant, tk.release), Label(tk.labels...), kubelets(tk.release), func(ctx SpecContext) {
			tolerated(ctx, tk.release, tk.variant, tk.skipLine)
		}, SpecTimeout(framework.LongSpec))
	}

	for _, ek := range exitingKubelets {
		It(fmt.Sprintf("makes the vanilla %s exit at start (negative control)", ek.release), Label(ek.labels...), kubelets(ek.release), func(ctx SpecContext) {
			_, k, _, sandbox, _ := orphanNode(ctx, ek.release, "vanilla")
			Eventually(ctx, func() bool { done, _ := k.Exited(); return done }).WithTimeout(60*time.Second).WithPolling(framework.Poll).
				Should(BeTrue(), "the vanilla kubelet kept running: the control no longer reproduces the bug\n%s", k.LogTail(40))
			Expect(k.Log()).To(ContainSubstring(orphanError+" '"+sandbox+"'"), k.LogTail(20))
		}, SpecTimeout(framework.ShortSpec))
	}
})

// tolerated checks a kubelet that must tolerate the orphan: it starts and
// stays up, says it skipped the orphan, runs a new pod, stops and removes
// the orphan, and leaves the other pod alone.
func tolerated(ctx context.Context, release, variant string, skipLine func(orphan, sandbox string) string) {
	node, k, before, sandbox, events := orphanNode(ctx, release, variant)
	Eventually(ctx, func() bool { return k.Healthy(ctx) }).WithTimeout(60*time.Second).WithPolling(framework.Poll).
		Should(BeTrue(), func() string { return k.LogTail(40) })
	Consistently(ctx, func() bool {
		done, _ := k.Exited()
		return !done && k.Healthy(ctx)
	}).WithTimeout(30*time.Second).WithPolling(time.Second).Should(BeTrue(), func() string { return k.LogTail(40) })
	orphan := before["victim/app"].ID
	Expect(k.Log()).To(ContainSubstring(skipLine(orphan, sandbox)),
		"the skip line, naming the orphan and its missing sandbox")

	By("starting a new pod on the kubelet")
	newcomer := hangPod("newcomer", "e2e-orphan-newcomer-0001", "8083")
	Expect(node.AddPod(newcomer)).To(Succeed())
	waitRunning(ctx, node, []framework.Pod{newcomer})

	By("waiting for the kubelet to stop the orphan and the garbage collector to remove it")
	Eventually(ctx, func() (bool, error) {
		list, err := node.Docker.KubeContainers(ctx)
		for _, c := range list {
			if c.ID == orphan {
				return true, err
			}
		}
		return false, err
	}).WithTimeout(framework.OrphanGCTimeout).WithPolling(framework.Poll).Should(BeFalse(), func() string { return node.Describe(ctx) })

	kept := map[string]bool{before["bystander/POD"].ID: true, before["bystander/app"].ID: true}
	Expect(events.DestructiveFor(kept)).To(BeEmpty(), "the other pod was touched:\n%s", framework.Summary(events.Events()))
	now, err := node.Containers(ctx)
	Expect(err).NotTo(HaveOccurred())
	for _, key := range []string{"bystander/POD", "bystander/app"} {
		Expect(now[key].ID).To(Equal(before[key].ID), "%s was replaced\n%s", key, node.Describe(ctx))
		Expect(now[key].State).To(Equal("running"), key)
	}
}
