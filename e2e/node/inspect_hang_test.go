package node

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/dockerproxy"
	"kubelet-toolchain/e2e/framework"
)

const (
	// inspectDeadline is the patched kubelet's deadline on docker inspect.
	inspectDeadline = 10 * time.Second
	runtimeDown     = "container runtime is down"
	// vanillaWatch is how long the vanilla control must stay broken.
	vanillaWatch = 150 * time.Second
)

func hangPod(name, uid string, port string) framework.Pod {
	return framework.Pod{Name: name, UID: uid, Containers: []map[string]any{
		framework.Workload("app", dataFile, map[string]any{"env": []map[string]any{{"name": "PORT", "value": port}}}),
	}}
}

// hungNode runs a first pod through a fault-injecting proxy, then makes the
// proxy hold every inspect of its container (as docker does when it holds
// the container's lock) and restarts kubelet with a second pod to start.
func hungNode(ctx context.Context, variant string) (node *framework.Node, k *framework.Kubelet, proxy *dockerproxy.Proxy, hungID string, events *framework.EventLog) {
	node = newNode(ctx)
	proxy, err := dockerproxy.Start(filepath.Join(node.Dir, "docker.sock"), node.Docker.Socket, dockerproxy.WithLogWriter(GinkgoWriter))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(proxy.Close)
	node.Endpoint = proxy.Socket()

	first := hangPod("first", "e2e-hang-first-0001", "8081")
	Expect(node.AddPod(first)).To(Succeed())
	startKubelet(ctx, node, "1.9.11", variant)
	waitRunning(ctx, node, []framework.Pod{first})
	cs, err := node.Containers(ctx)
	Expect(err).NotTo(HaveOccurred())
	hungID = cs["first/app"].ID
	node.StopKubelet()

	By("hanging every docker inspect of first/app, then restarting kubelet with a second pod")
	Expect(proxy.Hang(hungID)).To(Succeed())
	events, err = node.Docker.WatchEvents(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(events.Stop)
	k, err = node.Start("1.9.11", variant)
	Expect(err).NotTo(HaveOccurred())
	Expect(node.AddPod(hangPod("second", "e2e-hang-second-0001", "8082"))).To(Succeed())
	return node, k, proxy, hungID, events
}

func secondRunning(ctx context.Context, node *framework.Node) bool {
	cs, err := node.Containers(ctx)
	return err == nil && cs["second/app"].State == "running"
}

func expectHungContainerKept(ctx context.Context, node *framework.Node, hungID string, events *framework.EventLog) {
	Expect(events.DestructiveFor(map[string]bool{hungID: true})).To(BeEmpty(), "the hung container was touched:\n%s", framework.Summary(events.Events()))
	in, err := node.Docker.InspectContainer(ctx, hungID) // the real engine, not the proxy
	Expect(err).NotTo(HaveOccurred())
	Expect(in.State.Running).To(BeTrue(), "the hung container is no longer running")
}

var _ = Describe("A docker inspect that never returns", Label("inspect-hang"), func() {
	It("does not keep the patched 1.9.11 node NotReady or stall new pods", func(ctx SpecContext) {
		node, k, proxy, hungID, events := hungNode(ctx, "patched")
		start := k.Started()

		Eventually(ctx, func() bool { return secondRunning(ctx, node) }).
			WithTimeout(2*inspectDeadline+20*time.Second).WithPolling(framework.Poll).
			Should(BeTrue(), func() string { return node.Describe(ctx) })
		GinkgoWriter.Printf("second pod running %s after kubelet start\n", time.Since(start).Round(100*time.Millisecond))
		Expect(proxy.HeldRequests()).NotTo(BeEmpty(), "the proxy never held an inspect: the test did not exercise the hang")

		// The runtime must be up within the deadline + 10 s and stay up.
		upBy := start.Add(inspectDeadline + 10*time.Second)
		time.Sleep(time.Until(upBy.Add(framework.SyncFrequency)))
		Consistently(ctx, func() []time.Time {
			var late []time.Time
			for _, t := range k.LogTimes(runtimeDown) {
				if t.After(upBy) {
					late = append(late, t)
				}
			}
			return late
		}).WithTimeout(15*time.Second).WithPolling(framework.Poll).Should(BeEmpty(), func() string { return k.LogTail(40) })
		if times := k.LogTimes(runtimeDown); len(times) > 0 {
			GinkgoWriter.Printf("runtime reported down until %s after start\n", times[len(times)-1].Sub(start).Round(100*time.Millisecond))
		}
		expectHungContainerKept(ctx, node, hungID, events)
	})

	It("keeps the vanilla 1.9.11 node NotReady (negative control)", func(ctx SpecContext) {
		node, k, proxy, hungID, events := hungNode(ctx, "vanilla")
		start := k.Started()
		Consistently(ctx, func() bool { return secondRunning(ctx, node) }).
			WithTimeout(time.Until(start.Add(vanillaWatch))).WithPolling(2*time.Second).
			Should(BeFalse(), "the vanilla kubelet started the second pod: the control no longer reproduces the bug")
		Expect(proxy.HeldRequests()).NotTo(BeEmpty(), "the proxy never held an inspect: the test did not exercise the hang")
		times := k.LogTimes(runtimeDown)
		Expect(times).NotTo(BeEmpty(), k.LogTail(40))
		Expect(times[len(times)-1]).To(BeTemporally(">", time.Now().Add(-30*time.Second)),
			"%q is no longer being logged\n%s", runtimeDown, k.LogTail(40))
		expectHungContainerKept(ctx, node, hungID, events)
	})
})
