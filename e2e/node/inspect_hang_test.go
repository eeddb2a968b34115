package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
	"kubelet-toolchain/tools/dockerproxy"
)

const (
	// inspectDeadline is the patched kubelet's deadline on docker inspect.
	inspectDeadline = 10 * time.Second
	plegUnhealthy   = "PLEG is not healthy"
	// deadlineLogLine is how the patched cadvisor says it gave up.
	deadlineLogLine = "docker did not answer the inspect of container"
	// sandboxListGaveUp is how the patched kubelet says its one docker ps
	// before its static pod sources start (the static pod UIDs' sandbox
	// listing) gave up at its 10 s bound.
	sandboxListGaveUp = "could not list pod sandboxes (listing pod sandboxes took more than 10s)"
	// vanillaWatch is how long the vanilla control must stay broken: more
	// than three times what the patched kubelet needs to start the pod.
	vanillaWatch = 60 * time.Second
	// plegThreshold is the relist threshold of these releases' PLEG: a
	// relist blocked longer makes the node NotReady. The field report's
	// release (1.12: its ReadyCondition and log lines are 1.12/1.13 code)
	// is watched past it; the others for patchedWatch.
	plegThreshold = 3 * time.Minute
	patchedWatch  = 45 * time.Second
	fieldRelease  = "1.12.10"
)

// runtimeDown is how the release's sync loop says the runtime is not
// ready yet (from 1.13 it no longer says "down" before its first status
// check).
func runtimeDown(release string) string {
	if framework.Minor(release) >= 13 {
		return "container runtime status check may not have completed yet"
	}
	return "container runtime is down"
}

// hangReleases are the releases that ship the inspect deadlines.
var hangReleases = []string{"1.7.5", "1.8.15", "1.9.11", "1.10.13", "1.11.10", "1.12.10", "1.13.12", "1.14.10", "1.15.12", "1.16.15", "1.17.17", "1.18.6", "1.19.16", "1.23.17"}

// hangLabels are a release's extra labels: CI runs the field report's
// releases (1.12, 1.13) and the first ones fixed (1.9, 1.18); make
// test-all also 1.7.5's, 1.8.15's, 1.10.13's, 1.11.10's, 1.14.10 ..
// 1.17.17's, 1.19.16's and 1.23.17's ("extended"), the same patches
// (ported unchanged from 1.9.11's, 1.12.10's, 1.13.12's and 1.18.6's), by
// docs/e2e.md's rule.
func hangLabels(release string) []any {
	switch release {
	case "1.7.5", "1.8.15", "1.10.13", "1.11.10", "1.14.10", "1.15.12", "1.16.15", "1.17.17", "1.19.16", "1.23.17":
		return []any{Label("extended"), kubelets(release)}
	case fieldRelease:
		return []any{Label("seed"), kubelets(release)}
	}
	return []any{kubelets(release)}
}

// deadlineTimed schedules first the specs that time a patched kubelet
// against the inspect deadline from its start (runtime up within 10 s +
// 10 s), with their vanilla controls: each runs one kubelet with two pods,
// so while only they run, three side by side leave the cores mostly idle.
// The heavy specs (the switches: many pods, kubelet after kubelet) get a
// process only once all of these have started, and each deadline is
// decided within its spec's first 20 s. Run beside the heavy specs on the
// 2 cores here, a kubelet took 5-10 s from exec to its first runtime check
// and patched 1.9.11's and 1.12.10's runtimes came up 21-22 s after
// start; run alone, one after another at the end (Serial, before), they
// were 412 of the host phase's 707 s on a fresh machine, two processes
// idle. Ginkgo orders top-level containers by priority, so this decorates
// the two Describes that hold them.
var deadlineTimed = SpecPriority(20)

func hangPod(name, uid string, port string) framework.Pod {
	return framework.Pod{Name: name, UID: uid, Containers: []map[string]any{
		framework.Workload("app", dataFile, map[string]any{"env": []map[string]any{{"name": "PORT", "value": port}}}),
	}}
}

// hungNode runs a first pod through a fault-injecting proxy, then makes the
// proxy hold every inspect of its container (as docker does when it holds
// the container's lock) and restarts kubelet with a second pod to start.
func hungNode(ctx context.Context, release, variant string, opts ...dockerproxy.Option) (node *framework.Node, k *framework.Kubelet, proxy *dockerproxy.Proxy, hungID string, events *framework.EventLog) {
	node = newNode(ctx)
	proxy, err := dockerproxy.Start(filepath.Join(node.Dir, "docker.sock"), node.Docker.Socket, append([]dockerproxy.Option{dockerproxy.WithLogWriter(GinkgoWriter)}, opts...)...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(proxy.Close)
	node.Endpoint = proxy.Socket()

	first := hangPod("first", "e2e-hang-first-0001", "8081")
	Expect(node.AddPod(first)).To(Succeed())
	startKubelet(ctx, node, release, variant)
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
	k, err = node.Start(release, variant)
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

// hangBegan is when the kubelet first asked about the hung container (the
// proxy's first held inspect): the deadlines are counted from there, not
// from the kubelet's exec, whose start-up before it (5-10 s when the
// host suites' other kubelets share 2 cores: a shard failed a bound that
// counted it) is not what the patches bound.
func hangBegan(proxy *dockerproxy.Proxy) time.Time {
	GinkgoHelper()
	var first time.Time
	for _, h := range proxy.HeldRequests() {
		if !isListRequest(h) && (first.IsZero() || h.Start.Before(first)) {
			first = h.Start
		}
	}
	Expect(first.IsZero()).To(BeFalse(), "the proxy never held an inspect: the test did not exercise the hang")
	return first
}

// expectGaveUpAtDeadline checks how the held inspects ended: the patched
// kubelet's clients gave up at about the deadline, none waited longer.
func expectGaveUpAtDeadline(held []dockerproxy.HeldRequest) {
	GinkgoHelper()
	gaveUp := 0
	for _, h := range held {
		if h.Outcome != "client gave up" {
			continue
		}
		gaveUp++
		Expect(h.End.Sub(h.Start)).To(BeNumerically("~", inspectDeadline, 2*time.Second), "held inspect %s", h)
	}
	Expect(gaveUp).To(BeNumerically(">", 0), "no client gave up on a held inspect: %v", held)
}

// expectNoSecondContainer checks the hung pod got no replacement container.
func expectNoSecondContainer(events *framework.EventLog) {
	GinkgoHelper()
	for _, e := range events.Events() {
		Expect(e.Action == "create" && e.Key == "first/app").To(BeFalse(), "a second container was created for the hung pod: %s", e)
	}
}

var _ = Describe("A docker inspect that never returns", Label("inspect-hang"), deadlineTimed, func() {
	for _, release := range hangReleases {
		watch := patchedWatch
		if release == fieldRelease {
			watch = plegThreshold + 15*time.Second
		}
		It(fmt.Sprintf("does not keep the patched %s node NotReady or stall new pods", release), append(hangLabels(release), func(ctx SpecContext) {
			node, k, proxy, hungID, events := hungNode(ctx, release, "patched")
			start := k.Started()

			Eventually(ctx, func() bool { return secondRunning(ctx, node) }).
				WithTimeout(2*inspectDeadline+20*time.Second).WithPolling(framework.Poll).
				Should(BeTrue(), func() string { return node.Describe(ctx) })
			GinkgoWriter.Printf("second pod running %s after kubelet start\n", time.Since(start).Round(100*time.Millisecond))
			Expect(proxy.HeldRequests()).NotTo(BeEmpty(), "the proxy never held an inspect: the test did not exercise the hang")

			// The runtime must be up within the deadline + 10 s of the
			// first held inspect and stay up; the kubelet alive and
			// healthy, PLEG never unhealthy, for the whole watch.
			began := hangBegan(proxy)
			upBy := began.Add(inspectDeadline + 10*time.Second)
			GinkgoWriter.Printf("first inspect held %s after kubelet start\n", began.Sub(start).Round(100*time.Millisecond))
			time.Sleep(time.Until(upBy.Add(framework.SyncFrequency)))
			Consistently(ctx, func() error {
				// Both are logged until the first relist and status check.
				for _, s := range []string{runtimeDown(release), plegUnhealthy} {
					for _, t := range k.LogTimes(s) {
						if t.After(upBy) {
							return fmt.Errorf("%q logged at %s", s, t.Sub(start).Round(time.Second))
						}
					}
				}
				if done, err := k.Exited(); done {
					return fmt.Errorf("kubelet exited: %v", err)
				}
				if !k.Healthy(ctx) {
					return fmt.Errorf("kubelet /healthz not ok")
				}
				return nil
			}).WithTimeout(time.Until(start.Add(watch))).WithPolling(time.Second).Should(Succeed(), func() string { return k.LogTail(40) })
			if times := k.LogTimes(runtimeDown(release)); len(times) > 0 {
				GinkgoWriter.Printf("runtime reported down until %s after start\n", times[len(times)-1].Sub(start).Round(100*time.Millisecond))
			}
			Expect(k.Log()).To(ContainSubstring(deadlineLogLine), "the patch's log line")
			expectGaveUpAtDeadline(proxy.HeldRequests())
			expectNoSecondContainer(events)
			expectHungContainerKept(ctx, node, hungID, events)
		}, SpecTimeout(watch+3*time.Minute))...)

		It(fmt.Sprintf("keeps the vanilla %s node NotReady (negative control)", release), append(hangLabels(release), func(ctx SpecContext) {
			node, k, proxy, hungID, events := hungNode(ctx, release, "vanilla")
			start := k.Started()
			Consistently(ctx, func() bool { return secondRunning(ctx, node) }).
				WithTimeout(time.Until(start.Add(vanillaWatch))).WithPolling(2*time.Second).
				Should(BeFalse(), "the vanilla kubelet started the second pod: the control no longer reproduces the bug")
			Expect(proxy.HeldRequests()).NotTo(BeEmpty(), "the proxy never held an inspect: the test did not exercise the hang")
			times := k.LogTimes(runtimeDown(release))
			Expect(times).NotTo(BeEmpty(), k.LogTail(40))
			Expect(times[len(times)-1]).To(BeTemporally(">", time.Now().Add(-30*time.Second)),
				"%q is no longer being logged\n%s", runtimeDown(release), k.LogTail(40))
			expectHungContainerKept(ctx, node, hungID, events)
		}, SpecTimeout(framework.ShortSpec))...)
	}
})

// listHang is how long the pre-17.07 spec keeps the container's lock
// stuck before freeing it: far past the inspect deadline, so that a relist
// that waited it out cannot be mistaken for one that gave up.
const listHang = 60 * time.Second

// isListRequest tells a held container list (docker ps) from a held inspect.
func isListRequest(h dockerproxy.HeldRequest) bool {
	path, _, _ := strings.Cut(h.Path, "?")
	return strings.HasSuffix(path, "/containers/json") && strings.Count(path, "/") <= 3
}

// Engines before Docker 17.07 (1.13.1 and 17.05, the field report's) took
// every container's lock in docker ps; this machine's engine (20.10) lists
// without them, so the proxy imitates it (dockerproxy.WithListLocking).
var _ = Describe("A docker inspect that never returns, on an engine before Docker 17.07 (list locking imitated as 1.13.1 and 17.05 had it)", Label("inspect-hang", "seed"), kubelets(fieldRelease), deadlineTimed, func() {
	It(fmt.Sprintf("starts the patched %s and bounds its status inspects, but its relists wait out the hang", fieldRelease), func(ctx SpecContext) {
		node, k, proxy, hungID, events := hungNode(ctx, fieldRelease, "patched", dockerproxy.WithListLocking())
		start := k.Started()

		By("the runtime comes up within the inspect deadline, while the second pod waits for a relist")
		// Every docker ps is held, so the static pod UIDs' sandbox listing
		// gives up at its bound first; cadvisor's inspects start after it
		// and the runtime is up within their deadline.
		Consistently(ctx, func() bool { return secondRunning(ctx, node) }).
			WithTimeout(time.Until(start.Add(listHang))).WithPolling(2*time.Second).
			Should(BeFalse(), "the second pod started while every docker ps was held: the list locking is not imitated")
		began := hangBegan(proxy)
		upBy := began.Add(inspectDeadline + 10*time.Second)
		GinkgoWriter.Printf("first inspect held %s after kubelet start\n", began.Sub(start).Round(100*time.Millisecond))
		downs := k.LogTimes(runtimeDown(fieldRelease))
		for _, t := range downs {
			Expect(t).To(BeTemporally("<", upBy), "%q logged %s after start, %s after the first held inspect\n%s", runtimeDown(fieldRelease), t.Sub(start).Round(time.Second), t.Sub(began).Round(time.Second), k.LogTail(40))
		}
		if len(downs) > 0 {
			GinkgoWriter.Printf("runtime reported down until %s after start\n", downs[len(downs)-1].Sub(start).Round(100*time.Millisecond))
		}
		Expect(k.Log()).To(ContainSubstring(sandboxListGaveUp), "the sandbox listing did not give up at its bound")
		Expect(k.Log()).To(ContainSubstring(deadlineLogLine), "cadvisor gave up no inspect at its deadline")
		if done, err := k.Exited(); done {
			Fail(fmt.Sprintf("kubelet exited: %v\n%s", err, k.LogTail(40)))
		}

		By("freeing the container's lock: the held lists are answered and the second pod starts")
		released := time.Now()
		proxy.Release(hungID)
		Eventually(ctx, func() bool { return secondRunning(ctx, node) }).
			WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).
			Should(BeTrue(), func() string { return node.Describe(ctx) })
		GinkgoWriter.Printf("second pod running %s after the lock was freed (%s after kubelet start)\n",
			time.Since(released).Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))

		var lists, inspects []dockerproxy.HeldRequest
		longest := time.Duration(0)
		for _, h := range proxy.HeldRequests() {
			if !isListRequest(h) {
				inspects = append(inspects, h)
				continue
			}
			lists = append(lists, h)
			if h.Outcome == "released" {
				longest = max(longest, h.End.Sub(h.Start))
			}
		}
		Expect(lists).NotTo(BeEmpty(), "no docker ps was held")
		// A relist started within seconds of the kubelet and was answered
		// only when the lock was freed.
		Expect(longest).To(BeNumerically(">=", listHang-10*time.Second), "the longest held docker ps: %s\n%v", longest, lists)
		GinkgoWriter.Printf("%d docker ps held, the longest %s (the hang: %s); %d inspects held\n", len(lists), longest.Round(100*time.Millisecond), listHang, len(inspects))
		expectGaveUpAtDeadline(inspects)
		expectNoSecondContainer(events)
		expectHungContainerKept(ctx, node, hungID, events)
	}, SpecTimeout(listHang+framework.PodStartTimeout+3*time.Minute))
})

// slowStart is how long the proxy holds the inspects of a container after
// its start: past the status inspect deadline, well within the 2-minute
// runtime request timeout that StartContainer keeps.
const slowStart = inspectDeadline + 5*time.Second

// postStartFile is written into the container by its PostStart hook.
const postStartFile = "/tmp/poststart"

// postStartVariant is the 1.9.11 build the PostStart spec runs: patched,
// unless E2E_POSTSTART_VARIANT names another build directory under
// _output/1.9.11/. The negative control is the pre-change patch (its
// StartContainer gave the log-symlink inspect the 10 s deadline), not the
// vanilla tree, which has no short deadline at all: build the pre-change
// patch's kubelet into _output/1.9.11/<dir>/bin/linux/amd64/kubelet and run
// with E2E_POSTSTART_VARIANT=<dir>; the spec must then fail.
func postStartVariant() string {
	if v := os.Getenv("E2E_POSTSTART_VARIANT"); v != "" {
		return v
	}
	return "patched"
}

var _ = Describe("A container start whose inspect is slow", Label("inspect-hang"), kubelets("1.9.11"), func() {
	It("still runs the PostStart hook under patched 1.9.11", func(ctx SpecContext) {
		node := newNode(ctx)
		proxy, err := dockerproxy.Start(filepath.Join(node.Dir, "docker.sock"), node.Docker.Socket, dockerproxy.WithLogWriter(GinkgoWriter))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(proxy.Close)
		node.Endpoint = proxy.Socket()

		By(fmt.Sprintf("holding every inspect of poststart/app for %v after its start", slowStart))
		// dockershim names it k8s_<container>_<pod>_<namespace>_<uid>_<attempt>.
		proxy.DelayAfterStart("k8s_app_poststart-", slowStart)
		pod := framework.Pod{Name: "poststart", UID: "e2e-poststart-0001", Containers: []map[string]any{
			framework.Workload("app", dataFile, map[string]any{"lifecycle": map[string]any{
				"postStart": map[string]any{"exec": map[string]any{"command": []string{"/workload", "write", postStartFile, "ran"}}},
			}}),
		}}
		Expect(node.AddPod(pod)).To(Succeed())
		variant := postStartVariant()
		k := startKubelet(ctx, node, "1.9.11", variant)

		var id string
		Eventually(ctx, func() (string, error) {
			cs, err := node.Containers(ctx)
			if err != nil {
				return "", err
			}
			id = cs["poststart/app"].ID
			if id == "" {
				return "", fmt.Errorf("no container yet")
			}
			return node.Docker.ReadFile(ctx, id, postStartFile)
		}).WithTimeout(slowStart+framework.PodStartTimeout).WithPolling(framework.Poll).
			Should(Equal("ran"), func() string { return node.Describe(ctx) })

		var slowed []dockerproxy.HeldRequest
		for _, h := range proxy.HeldRequests() {
			if h.Container == id && !h.End.IsZero() && h.End.Sub(h.Start) > inspectDeadline {
				slowed = append(slowed, h)
			}
		}
		Expect(slowed).NotTo(BeEmpty(), "no inspect of the container was held past the %v deadline: the test did not slow its start\n%v", inspectDeadline, proxy.HeldRequests())
		for _, h := range slowed {
			GinkgoWriter.Printf("held past the deadline: %s\n", h)
		}
		Expect(k.LogTimes("failed to start container")).To(BeEmpty(), k.LogTail(40))
		// One container, the one the hook ran in: started once, never replaced.
		list, err := node.Docker.KubeContainers(ctx)
		Expect(err).NotTo(HaveOccurred())
		var apps []string
		for _, c := range list {
			if c.Key() == "poststart/app" {
				apps = append(apps, c.ID)
			}
		}
		Expect(apps).To(Equal([]string{id}), node.Describe(ctx))
		GinkgoWriter.Printf("%s: PostStart ran %s after kubelet start\n", variant, time.Since(k.Started()).Round(100*time.Millisecond))
	}, SpecTimeout(framework.ShortSpec))
})
