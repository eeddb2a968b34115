package node

import (
	"context"
	"fmt"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// The dockershim of 1.8 to 1.10 checksums the whole sandbox checkpoint,
// 1.11's checkpoint manager the data alone: each vanilla dockershim finds
// the other's checkpoints corrupt and removes them. A checkpoint is read
// only for a sandbox the engine no longer lists (and for teardown), so
// these specs remove a hostPort pod's sandbox container while no kubelet
// runs, as a crash or an operator's cleanup does: the next kubelet knows
// that sandbox from its checkpoint alone, or not at all, and then nothing
// tears its network down (hostport rules, the IP under a network plugin).
var checkpointHops = []struct {
	writer, reader string
	lost           string // how the vanilla reader logs a checkpoint it removes
}{
	{"1.10.13", "1.11.10", "Failed to retrieve checkpoint for sandbox %q: checkpoint is corrupted"},
	{"1.11.10", "1.10.13", checkpointLost + " %q is not valid, removing checkpoint"},
}

var _ = Describe("A sandbox removed while no kubelet ran, across 1.10 <-> 1.11", Label("upgrade"), kubelets("1.10.13", "1.11.10"), func() {
	for _, hop := range checkpointHops {
		It(fmt.Sprintf("is known to the patched %s from the checkpoint the official %s wrote", hop.reader, hop.writer), func(ctx SpecContext) {
			node, k, gone := sandboxGone(ctx, hop.writer, hop.reader, "patched")
			// Listed from its checkpoint alone (PLEG sees it exit), so the
			// pod is killed and its networking torn down through
			// StopPodSandbox.
			Eventually(ctx, func() int { return k.CountLog(fmt.Sprintf("Type:\"ContainerDied\", Data:%q", gone)) }).
				WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).ShouldNot(BeZero(), func() string { return k.LogTail(40) })
			Expect(k.CountLog(fmt.Sprintf(hop.lost, gone))).To(BeZero(), k.LogTail(40))
			Expect(k.CountLog(checkpointLost)).To(BeZero(), k.LogTail(40))
			_, err := os.Stat(node.Checkpoint(gone))
			fmt.Fprintf(GinkgoWriter, "patched %s read the official %s's checkpoint of %s (the file, until the GC removes the sandbox: %v)\n", hop.reader, hop.writer, gone, err == nil)
		}, SpecTimeout(framework.ShortSpec))

		It(fmt.Sprintf("is lost with its checkpoint by the vanilla %s (negative control)", hop.reader), func(ctx SpecContext) {
			node, k, gone := sandboxGone(ctx, hop.writer, hop.reader, "vanilla")
			// Logged once per sandbox listing that reads it before it is
			// gone.
			Eventually(ctx, func() int { return k.CountLog(fmt.Sprintf(hop.lost, gone)) }).
				WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).ShouldNot(BeZero(), func() string { return k.LogTail(40) })
			Expect(node.Checkpoint(gone)).NotTo(BeAnExistingFile())
			Expect(k.CountLog(fmt.Sprintf("Data:%q", gone))).To(BeZero(), "vanilla %s should never have seen the removed sandbox", hop.reader)
			fmt.Fprintf(GinkgoWriter, "vanilla %s deleted the official %s's checkpoint of %s\n", hop.reader, hop.writer, gone)
		}, SpecTimeout(framework.ShortSpec))
	}
})

// sandboxGone runs a hostPort pod under the official writer, then, with
// the kubelet stopped, removes the pod's sandbox container (its
// checkpoint stays) and starts the reader's variant kubelet. It returns
// the removed sandbox's id.
func sandboxGone(ctx context.Context, writer, reader, variant string) (*framework.Node, *framework.Kubelet, string) {
	GinkgoHelper()
	node := newNode(ctx)
	ports := framework.SlotPorts()
	pod := framework.Pod{Name: "ported", UID: "e2e-checkpoint-ported-0001", Containers: []map[string]any{
		framework.Workload("app", dataFile, map[string]any{
			"env":   []map[string]any{{"name": "PORT", "value": "8091"}},
			"ports": []map[string]any{{"containerPort": 8091, "hostPort": ports.HostPort, "hostIP": "127.0.0.1", "protocol": "TCP"}},
		}),
	}}
	Expect(node.AddPod(pod)).To(Succeed())
	startKubelet(ctx, node, writer, "vanilla")
	waitRunning(ctx, node, []framework.Pod{pod})
	cs, err := node.Containers(ctx)
	Expect(err).NotTo(HaveOccurred())
	node.StopKubelet()
	gone := cs["ported/POD"].ID
	Expect(gone).NotTo(BeEmpty())
	Expect(node.Checkpoint(gone)).To(BeAnExistingFile(), "the official %s wrote no checkpoint", writer)
	By(fmt.Sprintf("removing the sandbox %s written by the official %s while no kubelet runs", gone, writer))
	Expect(node.Docker.RemoveContainer(ctx, gone)).To(Succeed())
	return node, startKubelet(ctx, node, reader, variant), gone
}
