package node

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"kubelet-toolchain/e2e/framework"
)

// dataFile is written by each workload into its own writable layer at
// first start: it survives only if the container does.
const dataFile = "/tmp/marker"

// upgradePods are static pods of the shapes operators run that can really
// run here. hostDir backs the hostPath volume.
func upgradePods(hostDir string) []framework.Pod {
	return []framework.Pod{
		{
			Name: "shapes", UID: "e2e-upgrade-shapes-0001",
			Volumes: []map[string]any{
				{"name": "scratch", "emptyDir": map[string]any{}},
				{"name": "host", "hostPath": map[string]any{"path": hostDir}},
			},
			InitContainers: []map[string]any{
				framework.Workload("init", dataFile, map[string]any{
					"command":      []string{"/workload", "write", "/scratch/init/ready", "init-done"},
					"volumeMounts": []map[string]any{{"name": "scratch", "mountPath": "/scratch"}},
				}),
			},
			Containers: []map[string]any{
				framework.Workload("app", dataFile, map[string]any{
					"env": []map[string]any{{"name": "PORT", "value": "8081"}, {"name": "GREETING", "value": "hello"},
						{"name": "POD_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}}},
					"resources": map[string]any{
						"requests": map[string]any{"cpu": "50m", "memory": "16Mi"},
						"limits":   map[string]any{"cpu": "200m", "memory": "64Mi"},
					},
					"ports":          []map[string]any{{"name": "http", "containerPort": 8081, "protocol": "TCP"}},
					"livenessProbe":  map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": "http"}, "periodSeconds": 5},
					"readinessProbe": map[string]any{"tcpSocket": map[string]any{"port": 8081}, "periodSeconds": 5},
					"volumeMounts": []map[string]any{
						{"name": "scratch", "mountPath": "/scratch", "subPath": "app"},
						{"name": "host", "mountPath": "/host", "readOnly": true},
					},
				}),
				// A field 1.7 does not know, as a newer API server's
				// PodSecurityPolicy sets it on admitted pods.
				framework.Workload("restricted", dataFile, map[string]any{
					"env": []map[string]any{{"name": "PORT", "value": "8082"}},
					"securityContext": map[string]any{
						"allowPrivilegeEscalation": false,
						"runAsUser":                1000,
						"capabilities":             map[string]any{"drop": []string{"NET_RAW"}},
					},
				}),
			},
		},
		{
			Name: "pair", UID: "e2e-upgrade-pair-0001",
			Containers: []map[string]any{
				framework.Workload("first", dataFile, map[string]any{"env": []map[string]any{{"name": "PORT", "value": "8083"}}}),
				framework.Workload("second", dataFile, map[string]any{
					"env":        []map[string]any{{"name": "PORT", "value": "8084"}},
					"args":       []string{"--tag", "second"},
					"workingDir": "/tmp",
				}),
			},
		},
	}
}

// state is what must not change across kubelet switches.
type state struct {
	ids      map[string]string // pod/container -> container id (sandboxes included)
	restarts map[string]string // pod/container -> kubelet restart count label
	data     map[string]string // pod/container -> content of dataFile
}

func observe(ctx context.Context, node *framework.Node) state {
	s := state{ids: map[string]string{}, restarts: map[string]string{}, data: map[string]string{}}
	cs, err := node.Containers(ctx)
	Expect(err).NotTo(HaveOccurred())
	for key, c := range cs {
		s.ids[key] = c.ID
		if c.Labels[framework.LabelDockerType] == "container" {
			Expect(c.Labels).To(HaveKey(framework.LabelRestartCount), "%s has no restart count label", key)
			s.restarts[key] = c.Labels[framework.LabelRestartCount]
		}
		if c.Labels[framework.LabelDockerType] == "container" && c.State == "running" {
			// "running" comes a moment before the workload has written
			// its file: wait for it rather than race it.
			var data string
			Eventually(ctx, func() (err error) {
				data, err = node.Docker.ReadFile(ctx, c.ID, dataFile)
				return err
			}).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).
				Should(Succeed(), "reading %s of %s", dataFile, key)
			s.data[key] = data
		}
	}
	return s
}

func (s state) keys() []string {
	var out []string
	for k := range s.ids {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var _ = Describe("Switching kubelet 1.7 <-> 1.9", Label("upgrade"), func() {
	// Ordered is not needed: each spec builds its own node from nothing.

	It("recreates nothing with the patched 1.9.11", func(ctx SpecContext) {
		node := newNode(ctx)
		pods := upgradePods(filepath.Join(node.Dir, "host"))
		for _, p := range pods {
			Expect(node.AddPod(p)).To(Succeed())
		}
		startKubelet(ctx, node, "1.7.5", "vanilla")
		waitRunning(ctx, node, pods)
		before := observe(ctx, node)
		Expect(before.data).To(HaveLen(4), "every app container wrote its data: %v", before.data)

		events, err := node.Docker.WatchEvents(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(events.Stop)
		for _, step := range [][2]string{{"1.9.11", "patched"}, {"1.7.5", "vanilla"}, {"1.9.11", "patched"}} {
			k := startKubelet(ctx, node, step[0], step[1])
			waitRunning(ctx, node, pods)
			took := waitSyncs(ctx, k, framework.SyncsPerPhase)
			GinkgoWriter.Printf("%s %s: %d pod syncs after %s\n", step[0], step[1], framework.SyncsPerPhase, took.Round(time.Second))
			Expect(k.CountLog("hash changed")).To(BeZero(), k.LogTail(40))
		}
		node.StopKubelet()

		after := observe(ctx, node)
		ids := map[string]bool{}
		for _, id := range before.ids {
			ids[id] = true
		}
		Expect(events.DestructiveFor(ids)).To(BeEmpty(), "containers were stopped or removed:\n%s", framework.Summary(events.Events()))
		Expect(after.keys()).To(Equal(before.keys()), "containers were created or removed\n%s", node.Describe(ctx))
		Expect(after.ids).To(Equal(before.ids), "container ids changed\n%s", node.Describe(ctx))
		Expect(after.restarts).To(Equal(before.restarts), "restart counts changed")
		Expect(after.data).To(Equal(before.data), "data written before the first switch is gone")
		for _, e := range events.Events() {
			Expect(e.Action).NotTo(Equal("create"), "a container was created: %s", e)
		}
	})

	It("recreates the app containers with the vanilla 1.9.11 (negative control)", func(ctx SpecContext) {
		node := newNode(ctx)
		pods := upgradePods(filepath.Join(node.Dir, "host"))
		for _, p := range pods {
			Expect(node.AddPod(p)).To(Succeed())
		}
		startKubelet(ctx, node, "1.7.5", "vanilla")
		waitRunning(ctx, node, pods)
		before := observe(ctx, node)
		k := startKubelet(ctx, node, "1.9.11", "vanilla")
		// The vanilla kubelet recreates every app container on its first
		// sync; if it ever stops doing so, this control fails and the
		// patched spec above proves nothing.
		Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, before) }).WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(HaveLen(len(before.data)), func() string { return node.Describe(ctx) })
		Expect(k.CountLog("hash changed")).To(BeNumerically(">=", len(before.data)), k.LogTail(40))
		fmt.Fprintf(GinkgoWriter, "vanilla 1.9.11 recreated %d app containers\n", len(before.data))
	})

	It("applies an edit to a field 1.7 lacks to a container the patched 1.9.11 created", func(ctx SpecContext) {
		// A static pod with a pinned uid gets an update with the same uid
		// when its manifest is edited. allowPrivilegeEscalation is not in
		// 1.7's schema, so the 1.7 hash the patched kubelet writes cannot
		// see the edit; the native hash it records next to it must.
		node := newNode(ctx)
		yes, no := true, false
		pod := func(allow *bool) framework.Pod {
			return framework.Pod{Name: "edited", UID: "e2e-upgrade-edited-0001", Containers: []map[string]any{
				framework.Workload("app", dataFile, map[string]any{
					"env":             []map[string]any{{"name": "PORT", "value": "8085"}},
					"securityContext": map[string]any{"runAsUser": 1000, "allowPrivilegeEscalation": *allow},
				}),
			}}
		}
		Expect(node.AddPod(pod(&yes))).To(Succeed())
		k := startKubelet(ctx, node, "1.9.11", "patched")
		waitRunning(ctx, node, []framework.Pod{pod(&yes)})
		before := observe(ctx, node)
		first, err := node.Docker.InspectContainer(ctx, before.ids["edited/app"])
		Expect(err).NotTo(HaveOccurred())
		Expect(first.HostConfig.SecurityOpt).NotTo(ContainElement("no-new-privileges"))
		Expect(first.Config.Labels).To(HaveKey(framework.LabelNativeHash), "the patched kubelet records its native hash")

		By("flipping allowPrivilegeEscalation to false in the manifest")
		Expect(node.AddPod(pod(&no))).To(Succeed())
		Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, before) }).
			WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(ConsistOf("edited/app"), func() string { return node.Describe(ctx) + k.LogTail(30) })
		waitRunning(ctx, node, []framework.Pod{pod(&no)})
		now, err := node.Containers(ctx)
		Expect(err).NotTo(HaveOccurred())
		second, err := node.Docker.InspectContainer(ctx, now["edited/app"].ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(second.HostConfig.SecurityOpt).To(ContainElement("no-new-privileges"), "the edit was applied to the new container")
		Expect(k.CountLog("hash changed")).To(BeNumerically(">=", 1), k.LogTail(40))
	})
})
