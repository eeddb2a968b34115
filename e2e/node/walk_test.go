package node

import (
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// walkTimeout is a walk spec's timeout: the patched walk switches up,
// back down and to the official first kubelet (2n-1 switches), its
// vanilla control up (n-1).
func walkTimeout(walk []string, patched bool) SpecTimeout {
	switches := len(walk) - 1
	if patched {
		switches = 2*len(walk) - 1
	}
	return SpecTimeout(framework.WalkSpec(switches))
}

// expectWalkKeepsEverything runs the patched walk both roads share: the
// pods started by the official walk[0] are kept by each patched kubelet up
// the walk (the pod without a uid under walk[0]'s UID, in the kubelet's
// words), a pod without a uid made under the last one is kept by each
// patched kubelet back down (down to the patched walk[0] too when
// patchedFirst: it is on the road), no container is stopped or created,
// and the official walk[0] after them replaces exactly that late pod: no
// official kubelet derives later releases' UIDs (docs/fixes.md).
func expectWalkKeepsEverything(ctx SpecContext, walk []string, patchedFirst bool) {
	GinkgoHelper()
	first, last := walk[0], walk[len(walk)-1]
	node, pods, k, before := runningOn(ctx, first)
	Expect(before.data).To(HaveLen(appContainers(pods)), "every app container wrote its data: %v", before.data)
	expectCheckpoints(node, k, before, first)
	events, err := node.Docker.WatchEvents(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(events.Stop)
	uid := before.labels["unpinned/app"][framework.LabelPodUID]
	firstMinor := first[:strings.LastIndex(first, ".")]

	for _, release := range walk[1:] {
		By(fmt.Sprintf("switching to the patched %s: %s's pods are kept, the one without a uid too", release, first))
		k = switchTo(ctx, node, release, "patched", pods)
		expectSame(ctx, node, before, observe(ctx, node), "-> patched "+release)
		expectCheckpoints(node, k, before, "-> patched "+release)
		// What the kubelet decided, in its words (staticuid.Pick).
		Expect(k.CountLog(fmt.Sprintf("UID %s as %s derives it (its sandbox runs with it", uid, firstMinor))).NotTo(BeZero(), k.LogTail(40))
	}

	By(fmt.Sprintf("a new pod without a uid under the patched %s: it gets %s's UID, and the patched kubelets down the walk keep it", last, last))
	late := unpinnedLatePod()
	Expect(node.AddPod(late)).To(Succeed())
	all := append(pods, late)
	waitRunning(ctx, node, all)
	made := observe(ctx, node)
	down := slices.Clone(walk[1 : len(walk)-1])
	if patchedFirst {
		down = slices.Clone(walk[:len(walk)-1])
	}
	slices.Reverse(down)
	for _, release := range down {
		By(fmt.Sprintf("switching back to the patched %s: everything is kept", release))
		k = switchTo(ctx, node, release, "patched", all)
		expectSame(ctx, node, made, observe(ctx, node), "-> patched "+release)
		expectCheckpoints(node, k, made, "-> patched "+release)
	}
	evs := events.Events()
	Expect(framework.DestructiveIn(evs, idsOf(before))).To(BeEmpty(), "containers were stopped or removed:\n%s", framework.Summary(evs))
	Expect(createdBesides(evs, idsOf(made))).To(BeEmpty(), "a container was created:\n%s", framework.Summary(evs))

	By(fmt.Sprintf("switching back to the official %s: only the pod the patched %s started is replaced", first, last))
	k = startKubelet(ctx, node, first, "vanilla")
	Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, made) }).
		WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal([]string{"unpinned-late/app"}), func() string { return node.Describe(ctx) })
	waitSyncs(ctx, k, all, framework.SyncsPerPhase)
	Expect(replacedSince(ctx, node, made)).To(Equal([]string{"unpinned-late/app"}), node.Describe(ctx))
	node.StopKubelet()
}

// expectVanillaWalkAsPredicted is a walk's negative control: from the
// official walk[0], each vanilla kubelet of walk[1:] in turn, every switch
// first predicted by the node-mode preflight (the patched kubelet keeps
// every app container; check judges what the vanilla one is predicted to
// recreate), then made: the vanilla kubelet recreates exactly what was
// predicted, no more after SyncsPerPhase syncs, and a replaced pod
// without a uid runs under another UID. It returns, per release, whether
// its kubelet logged a changed container hash ("Container spec hash
// changed" up to 1.13, "Container <name> definition changed, will be
// restarted" from 1.14).
func expectVanillaWalkAsPredicted(ctx SpecContext, walk []string, check func(release string, rep preflightReport, predicted []string)) map[string]bool {
	GinkgoHelper()
	node, pods, _, before := runningOn(ctx, walk[0])
	state, from := before, walk[0]
	toPatched := func(r preflightRow) string { return r.ToPatched }
	toVanilla := func(r preflightRow) string { return r.ToVanilla }
	hashChanged := map[string]bool{}
	for _, release := range walk[1:] {
		By(fmt.Sprintf("the preflight from %s's node to %s", from, release))
		rep := nodePreflight(ctx, node, release, "--from", from)
		Expect(appKeys(rep.Rows, toPatched, "kept")).To(HaveLen(len(before.data)), "the patched %s should be predicted to keep every app container", release)
		predicted := appKeys(rep.Rows, toVanilla, "recreated")
		check(release, rep, predicted)

		By(fmt.Sprintf("switching to the vanilla %s: it recreates what the preflight said", release))
		k := startKubelet(ctx, node, release, "vanilla")
		if len(predicted) > 0 {
			Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, state) }).
				WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal(predicted), func() string { return node.Describe(ctx) })
		}
		waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
		Expect(replacedSince(ctx, node, state)).To(Equal(predicted), node.Describe(ctx))
		hashChanged[release] = k.CountLog("Container spec hash changed")+k.CountLog("definition changed, will be restarted") > 0
		waitRunning(ctx, node, pods)
		now := observe(ctx, node)
		was, is := state.labels["unpinned/app"][framework.LabelPodUID], now.labels["unpinned/app"][framework.LabelPodUID]
		if slices.Contains(predicted, "unpinned/app") {
			Expect(is).NotTo(Equal(was), "vanilla %s kept the UID", release)
		}
		fmt.Fprintf(GinkgoWriter, "vanilla %s -> %s recreated %v of %d app containers (the pod without a uid: UID %s -> %s), as the preflight predicted\n",
			from, release, predicted, len(before.data), was, is)
		state, from = now, release
	}
	node.StopKubelet()
	return hashChanged
}

// expectOnlyUnpinnedReplaced is the prediction of a switch that changes
// the static pod UID and no container hash: the vanilla kubelet replaces
// exactly the pod without a uid, the patched one keeps it.
func expectOnlyUnpinnedReplaced(release string, rep preflightReport, predicted []string) {
	GinkgoHelper()
	Expect(predicted).To(Equal([]string{"unpinned/app"}), "vanilla %s should be predicted to replace exactly the pod without a uid", release)
	Expect(rep.uidOf("default/unpinned").VanillaReplaced).To(BeTrue())
	Expect(rep.uidOf("default/unpinned").PodReplaced).To(BeFalse(), "the patched %s should be predicted to keep the pod", release)
}
