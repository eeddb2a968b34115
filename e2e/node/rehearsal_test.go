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
	Nodes             []struct {
		Name     string
		Kubelets []string
	}
	Pods []struct {
		Namespace, Name, Node, UID, Outcome, Predicted, Detail string
		Restarts                                               int
		NotReadySeconds                                        float64 `json:"notReadySeconds"`
	}
	Summary struct {
		Pods, Kept, Changed, Mispredicted int
		NotReadySeconds                   float64 `json:"notReadySeconds"`
		FailedRequests                    int     `json:"failedRequests"`
		Requests                          int
	}
}

// rehearse runs `toolchain rehearsal run` and returns its exit status and
// report. Its output goes to the spec's log.
func rehearse(ctx context.Context, args ...string) (int, rehearsalReport) {
	GinkgoHelper()
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
var _ = Describe("Rehearsal on kind-style nodes", Label("rehearsal"), Ordered, SpecPriority(10), func() {
	var machine map[string]string
	BeforeAll(func(ctx SpecContext) {
		machine = readSysctls(kubeletTunables)
		DeferCleanup(rehearsalDownLeavesNothing, NodeTimeout(framework.ShortSpec))
	})

	It("patched 1.9.11 keeps every pod across 1.7.5 -> 1.9.11 -> 1.7.5 -> 1.9.11 on 2 nodes, Ready, no failed request", func(ctx SpecContext) {
		expectEveryPodKept(ctx, "1.7.5", "1.9.11", "1.9.11")
	}, SpecTimeout(framework.LongSpec))

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
		expectClusterLockedDown(ctx)
	}, SpecTimeout(framework.ShortSpec))

	It("vanilla 1.9.11 recreates the pods, as predicted, and fails (negative control)", func(ctx SpecContext) {
		expectRecreatedAsPredicted(ctx, "1.7.5", "1.9.11", true)
	}, SpecTimeout(framework.LongSpec))
})

// The steps through 1.8, each on a control plane of its own (1.7 and 1.8
// kubelets are within 1.9's supported skew), its vanilla control reusing
// the patched run's cluster. Not in CI's `make e2e`: `make test-all` runs
// them.
var _ = Describe("Rehearsal through 1.8 on kind-style nodes", Label("rehearsal-1.8"), func() {
	for _, step := range [][2]string{{"1.7.5", "1.8.15"}, {"1.8.15", "1.9.11"}} {
		from, to := step[0], step[1]
		Describe(fmt.Sprintf("from %s to %s", from, to), Ordered, SpecPriority(10), func() {
			BeforeAll(rehearsalDownAfterAll)
			It(fmt.Sprintf("patched %s keeps every pod across %s -> %s -> %s -> %s on 2 nodes, Ready, no failed request", to, from, to, from, to), func(ctx SpecContext) {
				expectEveryPodKept(ctx, from, to, "1.9.11")
			}, SpecTimeout(framework.LongSpec))
			// 1.8 -> 1.9 changes every container's hash (Container.VolumeDevices).
			every := to == "1.9.11"
			It(fmt.Sprintf("vanilla %s changes the pods the preflight predicts, and fails (negative control, from %s)", to, from), func(ctx SpecContext) {
				expectRecreatedAsPredicted(ctx, from, to, every)
			}, SpecTimeout(framework.LongSpec))
		})
	}
})

// The 1.12 -> 1.13 switch on the 1.13.12 control plane, the newest that
// supports both kubelets: the container hash does not change, the static
// pod UID does (EnableServiceLinks). Label extended: `make test-all` runs
// it (docs/e2e.md, the rule: CI carries one rehearsal).
var _ = Describe("Rehearsal on the 1.13.12 control plane", Label("rehearsal", "extended"), Ordered, SpecPriority(10), func() {
	BeforeAll(rehearsalDownAfterAll)
	It("patched 1.13.12 keeps every pod across 1.12.10 -> 1.13.12 -> 1.12.10 -> 1.13.12 on 2 nodes, Ready, no failed request", func(ctx SpecContext) {
		expectEveryPodKept(ctx, "1.12.10", "1.13.12", "1.13.12")
	}, SpecTimeout(framework.LongSpec))
	It("the cluster refuses anonymous and uncertified clients (API server, kubelets, etcd), keeps the controller manager and scheduler on loopback, and serves exec and logs through the API server", func(ctx SpecContext) {
		expectClusterLockedDown(ctx)
	}, SpecTimeout(framework.ShortSpec))
	It("vanilla 1.13.12 replaces the static pod without a uid, as predicted, and fails (negative control)", func(ctx SpecContext) {
		rep := expectRecreatedAsPredicted(ctx, "1.12.10", "1.13.12", false)
		for _, p := range rep.Pods {
			want := "kept"
			if strings.HasPrefix(p.Name, "static-web-") {
				want = "replaced"
			}
			Expect(p.Outcome).To(Equal(want), "%s/%s: %s", p.Namespace, p.Name, p.Detail)
		}
	}, SpecTimeout(framework.LongSpec))
})

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
func expectEveryPodKept(ctx context.Context, from, to, cp string) {
	GinkgoHelper()
	code, rep := rehearse(ctx, "--from", from, "--to", to, "--variant", "patched", "--nodes", "2")
	Expect(rep.Variant).To(Equal("patched"))
	Expect(rep.ControlPlane).To(HavePrefix("v" + cp + "+"))
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
	// 3 switches per node. A pod without a probe never goes unready; one
	// whose containers were recreated is out for much longer.
	for _, p := range rep.Pods {
		bound := 30.0
		if strings.HasPrefix(p.Name, "privileged-agent-") {
			bound = 0
		}
		Expect(p.NotReadySeconds).To(BeNumerically("<=", bound), "%s/%s was not Ready for %.0fs", p.Namespace, p.Name, p.NotReadySeconds)
	}
	Expect(code).To(Equal(0))
}

// expectRecreatedAsPredicted rehearses from -> vanilla to on 2 nodes: the
// rehearsal fails, some pods change, and every pod's outcome is the
// preflight's prediction (1.7 -> 1.8 changes only the pods whose
// containers reach a field 1.8 added); with everyPod none is kept. It
// returns the report.
func expectRecreatedAsPredicted(ctx context.Context, from, to string, everyPod bool) rehearsalReport {
	GinkgoHelper()
	code, rep := rehearse(ctx, "--from", from, "--to", to, "--variant", "vanilla", "--nodes", "2")
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
