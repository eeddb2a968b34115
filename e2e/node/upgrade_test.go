package node

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
	ports := framework.SlotPorts()
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
		{
			// Lifecycle hooks and an exec liveness probe: handlers the hash
			// covers, run through dockershim's exec. From 1.20 the kubelet
			// enforces an exec probe's timeout (default 1 s): on 2 busy cores
			// a docker exec took longer three times running and vanilla
			// 1.20.15 restarted the container mid-spec, so it gets 5 s.
			Name: "hooks", UID: "e2e-upgrade-hooks-0001",
			Containers: []map[string]any{
				framework.Workload("app", dataFile, map[string]any{
					"env": []map[string]any{{"name": "PORT", "value": "8087"}},
					"lifecycle": map[string]any{
						"postStart": map[string]any{"exec": map[string]any{"command": []string{"/workload", "write", "/tmp/poststart", "done"}}},
						"preStop":   map[string]any{"exec": map[string]any{"command": []string{"/workload", "write", "/tmp/prestop", "done"}}},
					},
					"livenessProbe": map[string]any{"exec": map[string]any{"command": []string{"/workload", "write", "/tmp/alive", "ok"}}, "periodSeconds": 5, "timeoutSeconds": 5},
				}),
			},
		},
		{
			// Guaranteed QoS (requests == limits) under a pod-level
			// securityContext.
			Name: "guaranteed", UID: "e2e-upgrade-guaranteed-0001",
			SecurityContext: map[string]any{"runAsUser": 1000, "fsGroup": 2000, "supplementalGroups": []int{3000}},
			Containers: []map[string]any{
				framework.Workload("app", dataFile, map[string]any{
					"env": []map[string]any{{"name": "PORT", "value": "8088"}},
					"resources": map[string]any{
						"requests": map[string]any{"cpu": "100m", "memory": "32Mi"},
						"limits":   map[string]any{"cpu": "100m", "memory": "32Mi"},
					},
				}),
			},
		},
		{
			Name: "onfailure", UID: "e2e-upgrade-onfailure-0001", RestartPolicy: "OnFailure",
			Containers: []map[string]any{
				framework.Workload("app", dataFile, map[string]any{"env": []map[string]any{{"name": "PORT", "value": "8089"}}}),
			},
		},
		{
			// A privileged container (kubelets run with
			// --allow-privileged=true): CNI agents and storage drivers.
			Name: "privileged", UID: "e2e-upgrade-privileged-0001",
			Containers: []map[string]any{
				framework.Workload("agent", dataFile, map[string]any{
					"env":             []map[string]any{{"name": "PORT", "value": "8091"}},
					"securityContext": map[string]any{"privileged": true},
				}),
			},
		},
		{
			// hostNetwork with a hostPort; the server binds loopback only.
			Name: "hostnet", UID: "e2e-upgrade-hostnet-0001", HostNetwork: true,
			Containers: []map[string]any{
				framework.Workload("app", dataFile, map[string]any{
					"env":   []map[string]any{{"name": "PORT", "value": strconv.Itoa(ports.HostNetwork)}, {"name": "ADDR", "value": "127.0.0.1"}},
					"ports": []map[string]any{{"containerPort": ports.HostNetwork, "hostPort": ports.HostNetwork, "protocol": "TCP"}},
				}),
			},
		},
	}
}

// appContainers counts the long-running containers of pods.
func appContainers(pods []framework.Pod) int {
	n := 0
	for _, p := range pods {
		n += len(p.Containers)
	}
	return n
}

// notReady lists the pods whose last status the kubelet logged is not Ready.
func notReady(k *framework.Kubelet, pods []framework.Pod) []string {
	ready := k.PodReady()
	var out []string
	for _, p := range pods {
		if !ready[p.Name] {
			out = append(out, p.Name)
		}
	}
	return out
}

// latePod is created while the patched 1.9.11 runs: 1.7.5 must then keep
// what the patched kubelet made.
func latePod() framework.Pod {
	return framework.Pod{Name: "late", UID: "e2e-upgrade-late-0001", Containers: []map[string]any{
		framework.Workload("app", dataFile, map[string]any{"env": []map[string]any{{"name": "PORT", "value": "8090"}}}),
	}}
}

// unpinnedPod has no metadata.uid, as kubeadm's and kops' manifests: each
// kubelet derives its UID from the pod, and the patched 1.9.11 derives
// 1.7's. Its hostPort (the slot's) is bound by the engine for the sandbox
// (no network plugin here), on loopback only.
func unpinnedPod() framework.Pod {
	ports := framework.SlotPorts()
	return framework.Pod{Name: "unpinned", Containers: []map[string]any{
		framework.Workload("app", dataFile, map[string]any{
			"env":            []map[string]any{{"name": "PORT", "value": "8091"}},
			"ports":          []map[string]any{{"containerPort": 8091, "hostPort": ports.HostPort, "hostIP": "127.0.0.1", "protocol": "TCP"}},
			"readinessProbe": map[string]any{"tcpSocket": map[string]any{"port": 8091}, "periodSeconds": 2},
		}),
	}}
}

// rebindPods take the host ports of hostnet and unpinned once those are
// deleted: they run, Ready and never restarted, only if the ports were
// released.
func rebindPods() []framework.Pod {
	ports := framework.SlotPorts()
	probe := func(port int) map[string]any {
		return map[string]any{"tcpSocket": map[string]any{"port": port}, "periodSeconds": 2}
	}
	return []framework.Pod{
		{Name: "rebind-hostnet", UID: "e2e-upgrade-rebind-hostnet-0001", HostNetwork: true, Containers: []map[string]any{
			framework.Workload("app", dataFile, map[string]any{
				"env":            []map[string]any{{"name": "PORT", "value": strconv.Itoa(ports.HostNetwork)}, {"name": "ADDR", "value": "127.0.0.1"}},
				"ports":          []map[string]any{{"containerPort": ports.HostNetwork, "hostPort": ports.HostNetwork, "protocol": "TCP"}},
				"readinessProbe": map[string]any{"exec": map[string]any{"command": []string{"/workload", "write", "/tmp/ready", "ok"}}, "periodSeconds": 2},
			}),
		}},
		{Name: "rebind", UID: "e2e-upgrade-rebind-0001", Containers: []map[string]any{
			framework.Workload("app", dataFile, map[string]any{
				"env":            []map[string]any{{"name": "PORT", "value": "8091"}},
				"ports":          []map[string]any{{"containerPort": 8091, "hostPort": ports.HostPort, "hostIP": "127.0.0.1", "protocol": "TCP"}},
				"readinessProbe": probe(8091),
			}),
		}},
	}
}

// runningOn starts a new node with the upgrade pods and the unpinned one
// under release's vanilla kubelet, and returns them running, observed.
func runningOn(ctx context.Context, release string) (*framework.Node, []framework.Pod, *framework.Kubelet, state) {
	GinkgoHelper()
	node := newNode(ctx)
	pods := append(upgradePods(filepath.Join(node.Dir, "host")), unpinnedPod())
	for _, p := range pods {
		Expect(node.AddPod(p)).To(Succeed())
	}
	k := startKubelet(ctx, node, release, "vanilla")
	waitRunning(ctx, node, pods)
	return node, pods, k, observe(ctx, node)
}

// sandboxes maps pod names to their sandbox container ids.
func (s state) sandboxes() map[string]string {
	out := map[string]string{}
	for key, id := range s.ids {
		if s.labels[key][framework.LabelDockerType] == "podsandbox" {
			pod, _, _ := strings.Cut(key, "/")
			out[pod] = id
		}
	}
	return out
}

// checkpointLost is what dockershim logs (1.7 and 1.9) when a sandbox
// checkpoint fails its checksum; 1.9 then deletes it.
const checkpointLost = "Checksum of checkpoint"

// expectCheckpoints checks every sandbox of s still has its dockershim
// checkpoint and that k never found one invalid.
func expectCheckpoints(node *framework.Node, k *framework.Kubelet, s state, what string) {
	GinkgoHelper()
	for pod, id := range s.sandboxes() {
		Expect(node.Checkpoint(id)).To(BeAnExistingFile(), "%s: the checkpoint of %s's sandbox %s is gone", what, pod, id)
	}
	Expect(k.CountLog(checkpointLost)).To(BeZero(), "%s: a checkpoint failed its checksum\n%s", what, k.LogTail(40))
	// From 1.24 dockershim is a process of its own (the shim).
	if shim := node.Shim(); shim != nil {
		Expect(shim.CountLog(checkpointLost)).To(BeZero(), "%s: a checkpoint failed the shim's checksum\n%s", what, shim.LogTail(40))
	}
}

// state is what must not change across kubelet switches.
type state struct {
	ids      map[string]string // pod/container -> container id (sandboxes included)
	restarts map[string]string // pod/container -> kubelet restart count label
	data     map[string]string // pod/container -> content of dataFile
	labels   map[string]map[string]string
}

func observe(ctx context.Context, node *framework.Node) state {
	s := state{ids: map[string]string{}, restarts: map[string]string{}, data: map[string]string{}, labels: map[string]map[string]string{}}
	cs, err := node.Containers(ctx)
	Expect(err).NotTo(HaveOccurred())
	for key, c := range cs {
		s.ids[key] = c.ID
		s.labels[key] = c.Labels
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

// switchTo starts release/variant on node and waits until every pod runs,
// has synced framework.SyncsPerPhase times and is Ready as this kubelet
// computes it, with no container seen as changed.
func switchTo(ctx context.Context, node *framework.Node, release, variant string, pods []framework.Pod) *framework.Kubelet {
	GinkgoHelper()
	k := startKubelet(ctx, node, release, variant)
	waitRunning(ctx, node, pods)
	took := waitSyncs(ctx, k, pods, framework.SyncsPerPhase)
	GinkgoWriter.Printf("%s %s: %d syncs of every pod after %s\n", release, variant, framework.SyncsPerPhase, took.Round(time.Second))
	// How a kubelet logs a container it recreates for its hash: "Container
	// spec hash changed" up to 1.13, "Container <name> definition changed,
	// will be restarted" from 1.14.
	Expect(k.CountLog("hash changed")).To(BeZero(), k.LogTail(40))
	Expect(k.CountLog("definition changed, will be restarted")).To(BeZero(), k.LogTail(40))
	// Ready as this kubelet computes it (after a restart each readiness
	// probe must pass once more).
	Eventually(ctx, func() []string { return notReady(k, pods) }).WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).
		Should(BeEmpty(), func() string { return k.LogTail(30) })
	return k
}

// expectSame checks that b, observed after a switch, is a: the same
// containers under the same ids, restart counts and data, and the unpinned
// pod's UID.
func expectSame(ctx context.Context, node *framework.Node, a, b state, what string) {
	GinkgoHelper()
	Expect(b.keys()).To(Equal(a.keys()), "%s: containers were created or removed\n%s", what, node.Describe(ctx))
	Expect(b.ids).To(Equal(a.ids), "%s: container ids changed\n%s", what, node.Describe(ctx))
	Expect(b.restarts).To(Equal(a.restarts), "%s: restart counts changed", what)
	Expect(b.data).To(Equal(a.data), "%s: data written before is gone", what)
	// Same ids imply it; said outright for the pod without a uid.
	Expect(b.labels["unpinned/app"][framework.LabelPodUID]).To(Equal(a.labels["unpinned/app"][framework.LabelPodUID]), "%s: the unpinned pod's UID changed", what)
}

// idsOf is the set of s's container ids.
func idsOf(s state) map[string]bool {
	ids := map[string]bool{}
	for _, id := range s.ids {
		ids[id] = true
	}
	return ids
}

// The walk's phases make its first spec one of the longest: scheduled early.
var _ = Describe("Switching kubelet 1.7 <-> 1.9", Label("upgrade", "seed"), kubelets("1.7.5", "1.9.11"), SpecPriority(5), func() {
	// Ordered is not needed: each spec builds its own node from nothing.

	It("recreates nothing with the patched 1.9.11, and 1.7.5 keeps what the patched 1.9.11 created", func(ctx SpecContext) {
		node, pods, k17, before := runningOn(ctx, "1.7.5")
		Expect(before.data).To(HaveLen(appContainers(pods)), "every app container wrote its data: %v", before.data)
		expectCheckpoints(node, k17, before, "1.7.5")
		events, err := node.Docker.WatchEvents(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(events.Stop)

		phase := func(release, variant string, pods []framework.Pod) *framework.Kubelet {
			GinkgoHelper()
			return switchTo(ctx, node, release, variant, pods)
		}
		same := func(a, b state, what string) {
			GinkgoHelper()
			expectSame(ctx, node, a, b, what)
		}

		By("switching to the patched 1.9.11: 1.7.5's containers are kept")
		k := phase("1.9.11", "patched", pods)
		same(before, observe(ctx, node), "1.7.5 -> patched 1.9.11")
		expectCheckpoints(node, k, before, "1.7.5 -> patched 1.9.11")
		// The drift the hash patch accepts, documented in the README: 1.7.5
		// does not know allowPrivilegeEscalation, so it started
		// shapes/restricted without no-new-privileges although the spec says
		// false; patched 1.9.11 keeps that container as it runs.
		restricted, err := node.Docker.InspectContainer(ctx, before.ids["shapes/restricted"])
		Expect(err).NotTo(HaveOccurred())
		Expect(restricted.HostConfig.SecurityOpt).NotTo(ContainElement("no-new-privileges"),
			"1.7.5 now honours allowPrivilegeEscalation: the drift the README describes is gone")
		// The privileged container really is one (the engine's runc wrapper
		// drops only what the machine's bounding set lacks).
		privileged, err := node.Docker.InspectContainer(ctx, before.ids["privileged/agent"])
		Expect(err).NotTo(HaveOccurred())
		Expect(privileged.HostConfig.Privileged).To(BeTrue(), "privileged/agent runs unprivileged")
		first := events.Events()
		Expect(framework.DestructiveIn(first, idsOf(before))).To(BeEmpty(), "containers were stopped or removed:\n%s", framework.Summary(first))
		Expect(first).NotTo(ContainElement(HaveField("Action", "create")), framework.Summary(first))

		By("a new pod, and a crashed container restarted, under the patched 1.9.11")
		late := latePod()
		Expect(node.AddPod(late)).To(Succeed())
		crashed := before.ids["pair/first"]
		Expect(node.Docker.Kill(ctx, crashed)).To(Succeed())
		Eventually(ctx, func() (string, error) {
			cs, err := node.Containers(ctx)
			if c := cs["pair/first"]; c.ID != crashed && c.State == "running" {
				return c.Labels[framework.LabelRestartCount], err
			}
			return "", err
		}).WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).Should(Equal("1"), func() string { return node.Describe(ctx) })
		all := append(pods, late)
		waitRunning(ctx, node, all)
		made := observe(ctx, node)
		for _, key := range []string{"late/app", "pair/first"} {
			Expect(made.labels[key]).To(HaveKey(framework.LabelNativeHash("1.9")), "%s was created by the patched kubelet", key)
		}
		mark := len(events.Events())

		for _, step := range [][2]string{{"1.7.5", "vanilla"}, {"1.9.11", "patched"}} {
			By(fmt.Sprintf("switching to %s %s: everything is kept, what the patched 1.9.11 created included", step[0], step[1]))
			k = phase(step[0], step[1], all)
			same(made, observe(ctx, node), "-> "+step[0]+" "+step[1])
			expectCheckpoints(node, k, made, "-> "+step[0]+" "+step[1])
		}
		later := events.Events()[mark:]
		Expect(framework.DestructiveIn(later, idsOf(made))).To(BeEmpty(), "containers were stopped or removed:\n%s", framework.Summary(later))
		Expect(createdBesides(later, idsOf(made))).To(BeEmpty(), "a container was created:\n%s", framework.Summary(later))

		By("a 1.7.5 sandbox removed while no kubelet ran: the patched 1.9.11 still knows it from its 1.7.5 checkpoint")
		// Removed with the kubelet stopped, as in the vanilla control below.
		// A running kubelet may relist between the engine's kill and its
		// removal: it then knows the sandbox from the engine, and its
		// StopPodSandbox deletes the checkpoint once the engine has no such
		// container (upstream's dockershim). CI once caught that moment.
		node.StopKubelet()
		gone := made.sandboxes()["guaranteed"]
		Expect(node.Docker.RemoveContainer(ctx, gone)).To(Succeed())
		Expect(node.Checkpoint(gone)).To(BeAnExistingFile())
		k = startKubelet(ctx, node, "1.9.11", "patched")
		Eventually(ctx, func() (string, error) {
			cs, err := node.Containers(ctx)
			return cs["guaranteed/POD"].ID, err
		}).WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).ShouldNot(Or(BeEmpty(), Equal(gone)), func() string { return node.Describe(ctx) })
		// Listed from its checkpoint alone (PLEG sees it exit), so the pod
		// is killed and its networking torn down through StopPodSandbox; the
		// checkpoint stays until the GC removes the sandbox with its last
		// dead container. Vanilla 1.9.11 deletes it as invalid instead and
		// never sees the sandbox (the negative control).
		Eventually(ctx, func() int { return k.CountLog(fmt.Sprintf("Type:\"ContainerDied\", Data:%q", gone)) }).
			WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).ShouldNot(BeZero(), func() string { return k.LogTail(40) })
		Expect(node.Checkpoint(gone)).To(BeAnExistingFile(), "the 1.7.5 checkpoint of the removed sandbox is gone")
		Expect(k.CountLog(checkpointLost)).To(BeZero(), k.LogTail(40))

		By("deleting the hostPort pods after the last switch releases their host ports")
		Expect(node.RemovePod("hostnet")).To(Succeed())
		Expect(node.RemovePod("unpinned")).To(Succeed())
		// Gone for good, not only between two of the kubelet's acts: a sync
		// of the pod queued before the removal may start it again after the
		// kill (1.9's pod workers; seen in CI: a new hostnet sandbox 0.6 s
		// after "Killing unwanted pod", killed by the housekeeping 1.4 s
		// later), so the containers must stay unchanged and stopped for
		// longer than two housekeeping periods (2 s each).
		var seen string
		var since time.Time
		Eventually(ctx, func() ([]string, error) {
			cs, err := node.Containers(ctx)
			var left, now []string
			for _, key := range []string{"hostnet/app", "hostnet/POD", "unpinned/app", "unpinned/POD"} {
				now = append(now, cs[key].ID+"="+cs[key].State)
				if st := cs[key].State; st == "running" || st == "created" {
					left = append(left, key)
				}
			}
			if state := strings.Join(now, " "); state != seen {
				seen, since = state, time.Now()
			}
			if len(left) == 0 && time.Since(since) < 5*time.Second {
				left = append(left, "(stopped for less than 5 s)")
			}
			return left, err
		}).WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).Should(BeEmpty(), func() string { return node.Describe(ctx) })
		rebind := rebindPods()
		for _, p := range rebind {
			Expect(node.AddPod(p)).To(Succeed())
		}
		waitRunning(ctx, node, rebind)
		waitSyncs(ctx, k, rebind, framework.SyncsPerPhase)
		Eventually(ctx, func() []string { return notReady(k, rebind) }).WithTimeout(framework.PodStartTimeout).WithPolling(framework.Poll).
			Should(BeEmpty(), func() string { return k.LogTail(30) })
		rebound := observe(ctx, node)
		for _, key := range []string{"rebind-hostnet/app", "rebind/app"} {
			Expect(rebound.restarts[key]).To(Equal("0"), "%s had to restart: its port was still taken\n%s", key, node.Describe(ctx))
		}
		node.StopKubelet()
	}, SpecTimeout(framework.LongSpec))

	It("recreates the app containers with the vanilla 1.9.11 (negative control)", func(ctx SpecContext) {
		node, _, _, before := runningOn(ctx, "1.7.5")
		// A sandbox gone while no kubelet ran: vanilla 1.9.11 finds only its
		// 1.7.5 checkpoint, fails its checksum and deletes it, so nothing
		// tears the sandbox's network down (hostport rules, the IP under a
		// network plugin).
		node.StopKubelet()
		gone := before.sandboxes()["guaranteed"]
		Expect(node.Docker.RemoveContainer(ctx, gone)).To(Succeed())
		Expect(node.Checkpoint(gone)).To(BeAnExistingFile())
		k := startKubelet(ctx, node, "1.9.11", "vanilla")
		// The vanilla kubelet recreates every app container on its first
		// sync; if it ever stops doing so, this control fails and the
		// patched spec above proves nothing.
		Eventually(ctx, func() ([]string, error) { return replacedSince(ctx, node, before) }).WithTimeout(2*time.Minute).WithPolling(framework.Poll).Should(HaveLen(len(before.data)), func() string { return node.Describe(ctx) })
		Expect(k.CountLog("hash changed")).To(BeNumerically(">=", len(before.data)-2), k.LogTail(40))
		now := observe(ctx, node)
		Expect(now.labels["unpinned/app"][framework.LabelPodUID]).NotTo(Equal(before.labels["unpinned/app"][framework.LabelPodUID]),
			"vanilla 1.9.11 replaced the unpinned pod by one of another UID")
		// Logged once per sandbox listing that reads it before it is gone:
		// the GC's and PLEG's listings can both (seen side by side, 7 ms apart).
		Expect(k.CountLog(fmt.Sprintf("%s %q is not valid, removing checkpoint", checkpointLost, gone))).To(BeNumerically(">=", 1), k.LogTail(40))
		Expect(node.Checkpoint(gone)).NotTo(BeAnExistingFile())
		Expect(k.CountLog(fmt.Sprintf("Data:%q", gone))).To(BeZero(), "vanilla 1.9.11 should never have seen the removed sandbox")
		fmt.Fprintf(GinkgoWriter, "vanilla 1.9.11 recreated %d app containers and deleted 1.7.5's checkpoint of %s\n", len(before.data), gone)
	}, SpecTimeout(framework.ShortSpec))

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
		Expect(first.Config.Labels).To(HaveKey(framework.LabelNativeHash("1.9")), "the patched kubelet records its native hash")

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
	}, SpecTimeout(framework.ShortSpec))
})
