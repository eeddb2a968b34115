package node

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// preflightRow is what the spec reads of `toolchain preflight
// --format json` (its JSON field names are an interface).
type preflightRow struct {
	Container  string  `json:"container"`
	Init       bool    `json:"init"`
	StoredHash *uint64 `json:"storedHash"`
	ToVanilla  string  `json:"toVanilla"`
	ToPatched  string  `json:"toPatched"`
}

// nodePreflight runs the preflight in node mode against the node's engine:
// the hashes the running containers carry, the node's manifests as the
// kubelet reads them.
func nodePreflight(ctx context.Context, node *framework.Node, to string) []preflightRow {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "_output", "bin", "toolchain"), "--root", repoRoot, "preflight",
		"--to", to, "--docker-endpoint", "unix://"+node.Docker.Socket, "--pods", node.ManifestDir,
		"--source", "static", "--node-name", framework.NodeName, "--format", "json",
		// As the node's kubelets run (a privileged pod is among the shapes).
		"--allow-privileged", strconv.FormatBool(node.AllowPrivileged))
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil // "the patched TO would recreate something": the rows say what
	}
	Expect(err).NotTo(HaveOccurred(), "preflight: %s", func() string {
		if ee != nil {
			return string(ee.Stderr)
		}
		return ""
	}())
	var rep struct {
		Rows []preflightRow `json:"containers"`
	}
	Expect(json.Unmarshal(out, &rep)).To(Succeed(), string(out))
	GinkgoWriter.Printf("preflight (node mode):\n%s\n", out)
	return rep.Rows
}

// appKeys turns preflight rows of app containers whose verdict for the
// given side starts with prefix into pod/container keys as the framework
// names containers.
func appKeys(rows []preflightRow, verdict func(preflightRow) string, prefix string) []string {
	var out []string
	for _, r := range rows {
		if r.Init || !strings.HasPrefix(verdict(r), prefix) {
			continue
		}
		// namespace/pod/container -> pod/container
		_, key, _ := strings.Cut(r.Container, "/")
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}

var _ = Describe("Preflight on a live node", Label("upgrade", "preflight"), Serial, func() {
	It("predicts from the node's hash labels what patched and vanilla 1.9.11 then do to 1.7.5's containers", func(ctx SpecContext) {
		node := newNode(ctx)
		// unpinned has no metadata.uid: vanilla 1.9 derives another UID
		// than 1.7 and replaces the whole pod; the patched 1.9.11 derives
		// 1.7's and keeps it, as the preflight says.
		unpinned := framework.Pod{Name: "unpinned", Containers: []map[string]any{
			framework.Workload("app", dataFile, map[string]any{"env": []map[string]any{{"name": "PORT", "value": "8091"}}}),
		}}
		pods := append(upgradePods(filepath.Join(node.Dir, "host")), unpinned)
		for _, p := range pods {
			Expect(node.AddPod(p)).To(Succeed())
		}
		startKubelet(ctx, node, "1.7.5", "vanilla")
		waitRunning(ctx, node, pods)
		before := observe(ctx, node)

		rows := nodePreflight(ctx, node, "1.9.11")
		for _, r := range rows {
			// Init containers have exited: the node lists running ones only.
			if !r.Init {
				Expect(r.StoredHash).NotTo(BeNil(), "%s: no hash label read from the node", r.Container)
			}
		}
		predictedKept := appKeys(rows, func(r preflightRow) string { return r.ToPatched }, "kept")
		predictedReplaced := appKeys(rows, func(r preflightRow) string { return r.ToPatched }, "recreated")
		predictedRecreated := appKeys(rows, func(r preflightRow) string { return r.ToVanilla }, "recreated")
		vanillaReplaced := appKeys(rows, func(r preflightRow) string { return r.ToVanilla }, "recreated (pod replaced)")
		Expect(predictedKept).To(HaveLen(len(before.data)), "every app container, the unpinned pod's included, should be predicted kept by patched 1.9.11")
		Expect(predictedReplaced).To(BeEmpty(), "nothing should be predicted recreated or replaced by patched 1.9.11")
		Expect(predictedRecreated).To(HaveLen(len(before.data)), "every app container should be predicted recreated by vanilla 1.9.11")
		Expect(vanillaReplaced).To(Equal([]string{"unpinned/app"}), "the unpinned static pod should be predicted replaced by vanilla 1.9.11")

		By("patched 1.9.11 keeps what the preflight said it keeps")
		k := startKubelet(ctx, node, "1.9.11", "patched")
		waitRunning(ctx, node, pods)
		waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
		now := observe(ctx, node)
		var kept []string
		for key := range before.data {
			if now.ids[key] == before.ids[key] {
				kept = append(kept, key)
			}
		}
		sort.Strings(kept)
		Expect(kept).To(Equal(predictedKept), node.Describe(ctx))
		Expect(now.labels["unpinned/app"][framework.LabelPodUID]).To(Equal(before.labels["unpinned/app"][framework.LabelPodUID]),
			"the unpinned pod kept its UID")

		By("vanilla 1.9.11 recreates what the preflight said it recreates")
		startKubelet(ctx, node, "1.9.11", "vanilla")
		Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, before) }).WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(Equal(predictedRecreated), func() string { return node.Describe(ctx) })
		Eventually(ctx, func() (string, error) {
			cs, err := node.Containers(ctx)
			return cs["unpinned/app"].Labels[framework.LabelPodUID], err
		}).WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).ShouldNot(Equal(before.labels["unpinned/app"][framework.LabelPodUID]),
			"vanilla 1.9.11 replaced the unpinned pod by one of another UID")
	}, SpecTimeout(framework.LongSpec))
})
