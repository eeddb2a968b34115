package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
	"kubelet-toolchain/tools/docker"
)

// rehearsalReport is what the spec reads of _output/rehearsal/report.json.
type rehearsalReport struct {
	From, To, Variant string
	ControlPlane      string `json:"controlPlane"`
	Faults            []rehearsalFault
	Nodes             []struct {
		Name      string
		Kubelets  []string
		Readiness []struct {
			Kubelet         string
			NotReadySeconds float64 `json:"notReadySeconds"`
			Ready           bool
			Conditions      []struct{ Status, Reason, Message string }
			Faults          []string
		}
		KubeletExits []struct {
			Kubelet   string
			LastLines []string `json:"lastLines"`
		} `json:"kubeletExits"`
	}
	NotReadyBoundSeconds float64 `json:"notReadyBoundSeconds"`
	Pods                 []struct {
		Namespace, Name, Node, UID, Outcome, Predicted, Detail string
		Restarts                                               int
		NotReadySeconds                                        float64 `json:"notReadySeconds"`
	}
	Summary struct {
		Pods, Kept, Changed, Mispredicted int
		NotReadySeconds                   float64 `json:"notReadySeconds"`
		FailedRequests                    int     `json:"failedRequests"`
		Requests                          int
		SlowRuns                          int `json:"slowRuns"`
		KubeletExits                      int `json:"kubeletExits"`
	}
}

// rehearsalFault is one of the report's faults.
type rehearsalFault struct {
	Kind, Node, Pod, Container, Predicted string
	ContainerID                           string `json:"containerID"`
	Held                                  int
	PredictionHeld                        bool `json:"predictionHeld"`
}

// rehearse runs `toolchain rehearsal run` and returns its exit status and
// report. Its output goes to the spec's log.
func rehearse(ctx context.Context, args ...string) (int, rehearsalReport) {
	GinkgoHelper()
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--from" || args[i] == "--to" {
			expectLabelled(labelKubelet, args[i+1])
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "_output", "bin", "toolchain"),
		append([]string{"--root", repoRoot, "rehearsal", "run", "--instance", strconv.Itoa(rehearsalInstance())}, args...)...)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(code).NotTo(Equal(2), "the rehearsal could not be carried out (exit 2); see its output above")
	var rep rehearsalReport
	b, err := os.ReadFile(rehearsalDir("report.json"))
	Expect(err).NotTo(HaveOccurred())
	Expect(json.Unmarshal(b, &rep)).To(Succeed())
	return code, rep
}

func rehearsalDown(ctx context.Context) {
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "_output", "bin", "toolchain"), "--root", repoRoot, "rehearsal", "down",
		"--instance", strconv.Itoa(rehearsalInstance()))
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Run()).To(Succeed(), "rehearsal down")
}

// kubeletTunables are the kernel settings every kubelet 1.7-1.18 writes at
// start unless they already hold these values (pkg/kubelet/cm
// container_manager_linux.go, setupKernelTunables).
var kubeletTunables = map[string]string{"vm/overcommit_memory": "1", "vm/panic_on_oom": "0", "kernel/panic": "10", "kernel/panic_on_oops": "1"}

func readSysctls(keys map[string]string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for k := range keys {
		b, err := os.ReadFile("/proc/sys/" + k)
		Expect(err).NotTo(HaveOccurred())
		out[k] = strings.TrimSpace(string(b))
	}
	return out
}

// Ordered: the specs share one cluster (the later ones check the first's,
// and the vanilla control reuses it: one bring-up).
// The rehearsals are the e2e's longest specs: scheduled first.
var _ = Describe("Rehearsal on kind-style nodes", Label("rehearsal", "seed"), kubelets("1.7.5", "1.9.11"), controlPlane("1.9.11"), Ordered, SpecPriority(10), func() {
	var machine map[string]string
	BeforeAll(func(ctx SpecContext) {
		machine = readSysctls(kubeletTunables)
		DeferCleanup(rehearsalDownLeavesNothing, NodeTimeout(framework.ShortSpec))
	})

	It("patched 1.9.11 keeps every pod across 1.7.5 -> 1.9.11 -> 1.7.5 -> 1.9.11 on 2 nodes, Ready, no failed request", func(ctx SpecContext) {
		expectEveryPodKept(ctx, "1.7.5", "1.9.11", "1.9.11")
	}, SpecTimeout(framework.RehearsalSpec))

	It("each node's kubelet wrote its kernel settings into the node's own shadows, the machine's are as they were", func(ctx SpecContext) {
		engine := docker.Client{Socket: rehearsalDir("engine", "docker.sock")}
		docker := func(args ...string) string {
			GinkgoHelper()
			out, err := engine.Run(ctx, args...)
			Expect(err).NotTo(HaveOccurred())
			return out
		}
		names := strings.Fields(docker("ps", "--filter", "label=io.kubelet-toolchain.rehearsal="+repoRoot, "--filter", "label=io.kubelet-toolchain.rehearsal.node", "--format", "{{.Names}}"))
		Expect(names).To(HaveLen(2))
		for _, n := range names {
			mounts := docker("exec", n, "cat", "/proc/1/mountinfo")
			for k, want := range kubeletTunables {
				Expect(mounts).To(ContainSubstring(" /proc/sys/"+k+" "), "node %s: /proc/sys/%s is not shadowed", n, k)
				Expect(docker("exec", n, "cat", "/proc/sys/"+k)).To(Equal(want), "node %s: %s as its kubelet left it", n, k)
			}
		}
		Expect(readSysctls(kubeletTunables)).To(Equal(machine), "the machine's kernel settings changed during the rehearsal")
	}, SpecTimeout(framework.ShortSpec))

	It("the cluster refuses anonymous and uncertified clients (API server, kubelets, etcd), keeps the controller manager and scheduler on loopback, and serves exec and logs through the API server", func(ctx SpecContext) {
		expectClusterLockedDown(ctx, "1.9.11")
	}, SpecTimeout(framework.ShortSpec))

	It("vanilla 1.9.11 recreates the pods, as predicted, and fails (negative control)", func(ctx SpecContext) {
		expectRecreatedAsPredicted(ctx, "1.7.5", "1.9.11", true)
	}, SpecTimeout(framework.RehearsalSpec))
})

// The steps through 1.8, each on a control plane of its own (1.7 and 1.8
// kubelets are within 1.9's supported skew), its vanilla control reusing
// the patched run's cluster. Not in CI's `make e2e`: `make test-all` runs
// them.
var _ = Describe("Rehearsal through 1.8 on kind-style nodes", Label("rehearsal-1.8"), func() {
	for _, step := range [][2]string{{"1.7.5", "1.8.15"}, {"1.8.15", "1.9.11"}} {
		from, to := step[0], step[1]
		Describe(fmt.Sprintf("from %s to %s", from, to), kubelets(from, to), controlPlane("1.9.11"), Ordered, SpecPriority(10), func() {
			BeforeAll(rehearsalDownAfterAll)
			It(fmt.Sprintf("patched %s keeps every pod across %s -> %s -> %s -> %s on 2 nodes, Ready, no failed request", to, from, to, from, to), func(ctx SpecContext) {
				expectEveryPodKept(ctx, from, to, "1.9.11")
			}, SpecTimeout(framework.RehearsalSpec))
			// 1.8 -> 1.9 changes every container's hash (Container.VolumeDevices).
			every := to == "1.9.11"
			It(fmt.Sprintf("vanilla %s changes the pods the preflight predicts, and fails (negative control, from %s)", to, from), func(ctx SpecContext) {
				expectRecreatedAsPredicted(ctx, from, to, every)
			}, SpecTimeout(framework.RehearsalSpec))
		})
	}
})

// The rehearsals on the later control planes, each with one of the field
// reports' faults on node-1 through its first switch to TO. Label
// extended: `make test-all` runs them (docs/e2e.md, the rule: CI carries
// one rehearsal; each fault's own specs on host nodes, and the static pod
// UID walk, are in CI).
//   - 1.12 -> 1.13 on the 1.13.12 control plane, the newest that supports
//     both: the container hash does not change, the static pod UID does
//     (EnableServiceLinks); with the docker-hang report's hung inspect.
//   - 1.18.6 -> 1.18.6, the orphan report's kubelet, on the 1.20.15
//     control plane (the newest that supports 1.18): an in-place switch
//     to the same release, with the report's orphaned container made
//     while node-1's kubelet is stopped.
//   - 1.18 -> 1.19 on the same control plane: the static pod UID changes
//     (PodSpec.SetHostnameAsFQDN, PodSecurityContext.SeccompProfile);
//     with the orphan (vanilla 1.19.16 exits on it too).
//   - 1.20 -> 1.21 on the 1.22.17 control plane: static pod UIDs hash the
//     node name and manifest path from 1.21 (kubernetes#87461); with the
//     orphan (vanilla 1.20..1.22 exit on it).
//   - 1.22 -> 1.23 on the 1.23.17 control plane, the last dockershim
//     release (static pod UIDs change again), with the hung inspect:
//     cadvisor's inspect still has no deadline in 1.23.17.
//
// And the hops of the road, without a fault:
//   - 1.9 -> 1.10 on the 1.11.10 control plane (the newest that supports
//     1.9 kubelets): SecurityContext.RunAsGroup changes the hash of every
//     container with a securityContext, and the static pod UID changes.
//   - 1.13 -> 1.14 on the 1.15.12 control plane: VolumeMount.SubPathExpr
//     changes the hash of every container with a volume mount, and the
//     static pod UID changes.
//   - 1.15 -> 1.16 on the 1.17.17 control plane: 1.16 hashes the JSON of
//     the container, so vanilla 1.16.15 recreates every pod.
//
// And the way out of dockershim:
//   - 1.23 -> 1.24 on the 1.25.16 control plane: each node's kubelet on
//     1.23.17's dockershim served on its own from its first switch to
//     1.24.17, and on its own dockershim again at each switch back (static
//     pod UIDs change, nothing else).
var (
	_ = describeRehearsal("1.11.10", "1.9.11", "1.10.13", "")
	_ = describeRehearsal("1.13.12", "1.12.10", "1.13.12", "hang")
	_ = describeRehearsal("1.15.12", "1.13.12", "1.14.10", "")
	_ = describeRehearsal("1.17.17", "1.15.12", "1.16.15", "")
	_ = describeRehearsal("1.20.15", "1.18.6", "1.18.6", "orphan")
	_ = describeRehearsal("1.20.15", "1.18.6", "1.19.16", "orphan")
	_ = describeRehearsal("1.22.17", "1.20.15", "1.21.14", "orphan")
	_ = describeRehearsal("1.23.17", "1.22.17", "1.23.17", "hang")
	_ = describeRehearsal("1.25.16", "1.23.17", "1.24.17", "")
)

// describeRehearsal: FROM -> patched TO on cp's control plane, with fault
// (if any) on node-1, the cluster's lockdown, and vanilla TO on the same
// fault (the negative control). Ordered: the specs share one cluster (the
// later ones check the first's, and the vanilla control reuses it: one
// bring-up); the rehearsals are the e2e's longest specs: scheduled first.
func describeRehearsal(cp, from, to, fault string) bool {
	walk := fmt.Sprintf("%s -> %s -> %s -> %s", from, to, from, to)
	return Describe("Rehearsal on the "+cp+" control plane, "+from+" -> "+to, Label("rehearsal", "extended"), kubelets(from, to), controlPlane(cp), Ordered, SpecPriority(10), func() {
		BeforeAll(rehearsalDownAfterAll)
		switch fault {
		case "":
			It(fmt.Sprintf("patched %s keeps every pod across %s on 2 nodes, Ready, no failed request, as the preflight predicted", to, walk), func(ctx SpecContext) {
				expectEveryPodKept(ctx, from, to, cp)
			}, SpecTimeout(framework.RehearsalSpec))
		case "hang":
			It(fmt.Sprintf("patched %s keeps every pod across %s on 2 nodes, Ready, no failed request, with one container's inspect hung on node-1 through its first switch: the node Ready within the bound, as the preflight predicted", to, walk), func(ctx SpecContext) {
				expectReadyOnHang(expectEveryPodKept(ctx, from, to, cp, "--faults", "hang"))
			}, SpecTimeout(framework.RehearsalSpec))
		case "orphan":
			It(fmt.Sprintf("patched %s starts on the orphaned container, removes it, and keeps every pod across %s on 2 nodes, as the preflight predicted", to, walk), func(ctx SpecContext) {
				rep := expectEveryPodKept(ctx, from, to, cp, "--faults", "orphan")
				f := expectFault(rep, "orphan")
				Expect(f.Pod).To(Equal("rehearsal-faults/orphan"))
				Expect(f.Predicted).To(HavePrefix("the kubelet starts"))
				Expect(rep.Nodes[0].Readiness[0].Faults).To(Equal([]string{"orphan"}))
			}, SpecTimeout(framework.RehearsalSpec))
		}
		It("the cluster refuses anonymous and uncertified clients (API server, kubelets, etcd), keeps the controller manager and scheduler on loopback, and serves exec and logs through the API server", func(ctx SpecContext) {
			expectClusterLockedDown(ctx, cp)
		}, SpecTimeout(framework.ShortSpec))
		switch fault {
		case "":
			// From 1.16 the hash is over the container's JSON: every pod.
			every := framework.Minor(from) < 16 && framework.Minor(to) >= 16
			It(fmt.Sprintf("vanilla %s changes the pods the preflight predicts%s, and fails (negative control)", to, map[bool]string{true: ", every one"}[every]), func(ctx SpecContext) {
				expectRecreatedAsPredicted(ctx, from, to, every)
			}, SpecTimeout(framework.RehearsalSpec))
		case "hang": // both hang switches change the static pod's UID
			It(fmt.Sprintf("vanilla %s on the hung container stays NotReady past the bound (the docker-hang report), replaces the static pod without a uid, both as predicted, and fails (negative control)", to), func(ctx SpecContext) {
				expectNotReadyOnHang(expectStaticPodReplaced(expectRecreatedAsPredicted(ctx, from, to, false, "--faults", "hang")), to)
			}, SpecTimeout(framework.RehearsalSpec))
		case "orphan":
			It(fmt.Sprintf("vanilla %s exits on the orphaned container (the orphan report), as predicted, and fails (negative control)", to), func(ctx SpecContext) {
				expectOrphanExit(ctx, from, to)
			}, SpecTimeout(framework.RehearsalSpec))
		}
	})
}

// rehearsalDownAfterAll, in a BeforeAll, takes the instance's cluster
// down after the container's specs and checks the machine's kernel
// settings are as they were before them.
func rehearsalDownAfterAll(ctx SpecContext) {
	machine := readSysctls(kubeletTunables)
	DeferCleanup(func(ctx SpecContext) {
		rehearsalDownLeavesNothing(ctx)
		Expect(readSysctls(kubeletTunables)).To(Equal(machine), "the machine's kernel settings changed during the rehearsal")
	}, NodeTimeout(framework.ShortSpec))
}

// expectEveryPodKept rehearses from -> patched to on 2 nodes and expects
// the control plane cp (the newest that supports both), every pod kept, as
// predicted, Ready but for the probes' blips, with no failed request.
func expectEveryPodKept(ctx context.Context, from, to, cp string, extra ...string) rehearsalReport {
	GinkgoHelper()
	code, rep := rehearse(ctx, append([]string{"--from", from, "--to", to, "--variant", "patched", "--nodes", "2"}, extra...)...)
	Expect(rep.Variant).To(Equal("patched"))
	Expect(rep.ControlPlane).To(HavePrefix("v" + cp + "+"))
	expectLabelled(labelControlPlane, cp)
	Expect(rep.Nodes).To(HaveLen(2))
	for _, n := range rep.Nodes {
		Expect(n.Kubelets).To(HaveLen(4), "node %s ran %v", n.Name, n.Kubelets)
		for i, v := range n.Kubelets {
			want := "v" + from + "+"
			if i%2 == 1 {
				want = "v" + to + "+patched"
			}
			Expect(v).To(HavePrefix(want), "node %s kubelet %d", n.Name, i)
		}
	}
	Expect(rep.Pods).NotTo(BeEmpty())
	for _, p := range rep.Pods {
		Expect(p.Outcome).To(Equal("kept"), "%s/%s on %s: %s", p.Namespace, p.Name, p.Node, p.Detail)
		Expect(p.Predicted).To(Equal("kept"), "%s/%s: the preflight predicted %s", p.Namespace, p.Name, p.Predicted)
	}
	Expect(rep.Summary.FailedRequests).To(BeZero())
	Expect(rep.Summary.Requests).To(BeNumerically(">", 100), "the prober sent hardly any requests")
	// Every kubelet restart, to the same release too, reports a pod with
	// a readiness probe not Ready until the probe passes again
	// (kubernetes/kubernetes#78733, #100277): a few seconds per switch,
	// 3 switches per node. A pod without a probe goes unready only when
	// the node controller sees its node NotReady (the restarted kubelet
	// posts Ready=False until its runtime status check completes: 1.4 s
	// to 12 s here by release and run, 18 s with the orphan; the node
	// lifecycle controller looks every 5 s) and marks the node's pods
	// NotReady, until the kubelet's status sync (10 s) puts them back:
	// at most that run's NotReady + 10 s per switch. A pod's
	// NotReadySeconds sums its node's switches, so its bound sums theirs
	// (the largest run alone was not the bound: patched 1.19.16's orphan
	// rehearsal failed at 19.8 s against 9.3 + 10). One whose containers
	// were recreated is out for much longer.
	agentBound := map[string]float64{} // by node
	for _, n := range rep.Nodes {
		for _, r := range n.Readiness {
			agentBound[n.Name] += r.NotReadySeconds + 10
		}
	}
	for _, p := range rep.Pods {
		bound := 30.0
		if strings.HasPrefix(p.Name, "privileged-agent-") {
			bound = agentBound[p.Node]
		}
		Expect(p.NotReadySeconds).To(BeNumerically("<=", bound), "%s/%s was not Ready for %.0fs", p.Namespace, p.Name, p.NotReadySeconds)
	}
	// Every node Ready under each new kubelet within the bound, read from
	// the Ready condition each kubelet posted; none exited.
	Expect(rep.NotReadyBoundSeconds).To(Equal(40.0))
	for _, n := range rep.Nodes {
		Expect(n.Readiness).To(HaveLen(3), "node %s", n.Name)
		for _, r := range n.Readiness {
			Expect(r.Ready).To(BeTrue(), "node %s under %s: %+v", n.Name, r.Kubelet, r)
			Expect(r.NotReadySeconds).To(BeNumerically("<=", rep.NotReadyBoundSeconds), "node %s under %s", n.Name, r.Kubelet)
		}
		Expect(n.KubeletExits).To(BeEmpty(), "node %s", n.Name)
	}
	Expect(rep.Summary.SlowRuns).To(BeZero())
	Expect(code).To(Equal(0))
	return rep
}

// expectFault: the report names the one fault of kind injected on node-1,
// named by the preflight before the switch, its prediction borne out. A
// hang is on a running container of a pod the rehearsal judged, whose
// inspects were held (so the kubelet did dial the proxy); an orphan's pod
// is the rehearsal's own, not among them.
func expectFault(rep rehearsalReport, kind string) rehearsalFault {
	GinkgoHelper()
	Expect(rep.Faults).To(HaveLen(1))
	f := rep.Faults[0]
	Expect(f.Kind).To(Equal(kind))
	Expect(f.Node).To(Equal("node-1"))
	Expect(f.ContainerID).To(HaveLen(64))
	Expect(f.Predicted).NotTo(BeEmpty(), "the preflight did not name the %s container", kind)
	Expect(f.PredictionHeld).To(BeTrue(), "the preflight predicted %q", f.Predicted)
	var pods []string
	for _, p := range rep.Pods {
		pods = append(pods, p.Namespace+"/"+p.Name)
	}
	if kind == "hang" {
		Expect(f.Held).To(BeNumerically(">", 0), "no inspect was held: the kubelet did not dial the proxy")
		Expect(pods).To(ContainElement(f.Pod))
	} else {
		Expect(pods).NotTo(ContainElement(f.Pod))
	}
	return f
}

// expectRecreatedAsPredicted rehearses from -> vanilla to on 2 nodes: the
// rehearsal fails, some pods change, and every pod's outcome is the
// preflight's prediction (1.7 -> 1.8 changes only the pods whose
// containers reach a field 1.8 added); with everyPod none is kept. It
// returns the report.
func expectRecreatedAsPredicted(ctx context.Context, from, to string, everyPod bool, extra ...string) rehearsalReport {
	GinkgoHelper()
	code, rep := rehearse(ctx, append([]string{"--from", from, "--to", to, "--variant", "vanilla", "--nodes", "2"}, extra...)...)
	Expect(code).To(Equal(1), "the vanilla rehearsal passed: the patched one proves nothing")
	Expect(strings.ToLower(rep.Variant)).To(Equal("vanilla"))
	changed := 0
	for _, p := range rep.Pods {
		if p.Outcome == "recreated" || p.Outcome == "replaced" {
			changed++
		}
		Expect(p.Outcome).To(Equal(p.Predicted), "%s/%s: %s, predicted %s (%s)", p.Namespace, p.Name, p.Outcome, p.Predicted, p.Detail)
		if everyPod {
			Expect(p.Outcome).NotTo(Equal("kept"), "%s/%s was kept by vanilla %s", p.Namespace, p.Name, to)
		}
	}
	Expect(changed).To(BeNumerically(">", 0), "vanilla %s changed no pod", to)
	Expect(rep.Summary.Changed).To(Equal(changed))
	fmt.Fprintf(GinkgoWriter, "vanilla %s -> %s changed %d of %d pods\n", from, to, changed, len(rep.Pods))
	return rep
}

// rehearsalDownLeavesNothing runs rehearsal down and checks it removed the
// rehearsal's bridge, mounts and control plane processes.
func rehearsalDownLeavesNothing(ctx SpecContext) {
	rehearsalDown(ctx)
	By("rehearsal down left nothing behind")
	bridge := fmt.Sprintf("kubelet-rh%d", rehearsalInstance())
	out, err := exec.CommandContext(ctx, "ip", "link", "show", bridge).CombinedOutput()
	Expect(err).To(HaveOccurred(), "the rehearsal's bridge %s is still there: %s", bridge, out)
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	Expect(err).NotTo(HaveOccurred())
	Expect(string(mounts)).NotTo(ContainSubstring(rehearsalDir()+"/"), "mounts left under %s", rehearsalDir())
	for _, pid := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		Expect(rehearsalDir("run", pid+".pid")).NotTo(BeAnExistingFile())
	}
}

// expectReadyOnHang checks a patched run's hang: predicted Ready, and
// node-1's first TO kubelet, the hung one, Ready within the bound.
func expectReadyOnHang(rep rehearsalReport) {
	GinkgoHelper()
	f := expectFault(rep, "hang")
	Expect(f.Predicted).To(HavePrefix("node Ready"))
	run := rep.Nodes[0].Readiness[0]
	Expect(run.Faults).To(Equal([]string{"hang"}))
	Expect(run.Ready).To(BeTrue(), "%+v", run)
}

// expectStaticPodReplaced checks that exactly the static pod without a
// uid was replaced (its UID changes at the switch), every other pod kept.
func expectStaticPodReplaced(rep rehearsalReport) rehearsalReport {
	GinkgoHelper()
	for _, p := range rep.Pods {
		want := "kept"
		if strings.HasPrefix(p.Name, "static-web-") {
			want = "replaced"
		}
		Expect(p.Outcome).To(Equal(want), "%s/%s: %s", p.Namespace, p.Name, p.Detail)
	}
	return rep
}

// expectNotReadyOnHang checks a vanilla run's hang, the docker-hang
// report: predicted NotReady, and node-1's hung kubelet never Ready, over
// the bound, saying its runtime status check had not completed.
func expectNotReadyOnHang(rep rehearsalReport, to string) {
	GinkgoHelper()
	f := expectFault(rep, "hang")
	Expect(f.Predicted).To(HavePrefix("node stays NotReady"))
	run := rep.Nodes[0].Readiness[0]
	Expect(run.Ready).To(BeFalse(), "vanilla %s became Ready on a hung container", to)
	Expect(run.NotReadySeconds).To(BeNumerically(">", rep.NotReadyBoundSeconds))
	var said []string
	for _, c := range run.Conditions {
		said = append(said, c.Message)
	}
	Expect(said).To(ContainElement(ContainSubstring("container runtime status check may not have completed yet")))
	Expect(rep.Summary.SlowRuns).To(Equal(1), "only the hung run is slow")
}

// expectOrphanExit rehearses from -> vanilla to with the orphan: node-1's
// first TO kubelet exits "no PodsandBox found with Id", as the preflight
// predicted, and the rehearsal fails; the orphan's pod is never judged.
func expectOrphanExit(ctx context.Context, from, to string) {
	GinkgoHelper()
	code, rep := rehearse(ctx, "--from", from, "--to", to, "--variant", "vanilla", "--nodes", "2", "--faults", "orphan")
	Expect(code).To(Equal(1), "the vanilla rehearsal passed: the patched one proves nothing")
	f := expectFault(rep, "orphan")
	Expect(f.Predicted).To(ContainSubstring(`exits at start: "no PodsandBox found with Id"`))
	Expect(rep.Nodes).NotTo(BeEmpty())
	Expect(rep.Nodes[0].KubeletExits).To(HaveLen(1), "node-1's kubelet did not exit")
	exit := rep.Nodes[0].KubeletExits[0]
	Expect(exit.Kubelet).To(Equal(to + "/vanilla"))
	Expect(strings.Join(exit.LastLines, "\n")).To(ContainSubstring("no PodsandBox found with Id"))
	Expect(rep.Summary.KubeletExits).To(Equal(1))
	// The walk ends at the exit: what TO would have done to the pods never
	// happened (their predictions are untested, none mispredicted).
	Expect(rep.Summary.Mispredicted).To(BeZero())
	for _, p := range rep.Pods {
		Expect(p.Namespace+"/"+p.Name).NotTo(Equal(f.Pod), "the orphan's pod is judged as a workload")
	}
}
