package verdict

import (
	"fmt"
	"sort"
	"strings"

	"kubelet-toolchain/scripts/internal/cluster/nodes"
)

// Outcomes of one pod across a rehearsal, from best to worst.
const (
	// Kept: same pod UID, every container the same (same ID, same
	// restart count), the same pod IP.
	Kept = "kept"
	// Restarted: same pod, a container replaced after it exited on its
	// own (a crash or a failed liveness probe's kill is the workload's,
	// not the switch's), the sandbox kept.
	Restarted = "restarted"
	// Recreated: same pod UID, but the kubelet killed a container or the
	// sandbox and made a new one (what a hash change does).
	Recreated = "recreated"
	// Replaced: the pod the workload had is gone; its controller or a
	// changed static pod UID made another.
	Replaced = "replaced"
)

var outcomeRank = map[string]int{Kept: 0, Restarted: 1, Recreated: 2, Replaced: 3}

// worse returns the worse of two outcomes.
func worse(a, b string) string {
	if outcomeRank[b] > outcomeRank[a] {
		return b
	}
	return a
}

// Labels dockershim sets on every container it creates.
const (
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
	labelDockerType    = "io.kubernetes.docker.type" // podsandbox or container
)

// PodChurn is what the engine did to one pod's containers.
type PodChurn struct {
	// killed: containers (by ID) that got a kill before they died: the
	// kubelet stopped them. died: containers that died without one.
	killed, died map[string]bool
	// sandboxCreated counts new sandboxes; created names the containers
	// (by container name) that got a new instance.
	sandboxCreated int
	created        map[string]int
	// probeKilled names the containers (by container name) the kubelet
	// killed because their liveness probe failed (NoteLivenessKills): the
	// workload's doing, like a crash.
	probeKilled map[string]bool
}

// ChurnByPod groups engine events by pod UID.
func ChurnByPod(evs []nodes.Event) map[string]*PodChurn {
	out := map[string]*PodChurn{}
	for _, e := range evs {
		a := e.Attributes
		uid := a[labelPodUID]
		if uid == "" {
			continue
		}
		c := out[uid]
		if c == nil {
			c = &PodChurn{killed: map[string]bool{}, died: map[string]bool{}, created: map[string]int{}}
			out[uid] = c
		}
		switch e.Action {
		case "kill":
			c.killed[e.ID] = true
		case "die":
			if !c.killed[e.ID] {
				c.died[e.ID] = true
			}
		case "create":
			if a[labelDockerType] == "podsandbox" {
				c.sandboxCreated++
			} else {
				c.created[a[labelContainerName]]++
			}
		}
	}
	return out
}

// Judgement is the outcome of one pod of the baseline.
type Judgement struct {
	Outcome string
	// Restarts is the sum over the pod's containers of the restart counts
	// gained since the baseline (0 for a replaced pod).
	Restarts int
	// Why says what changed, for the table and the JUnit failure.
	Why string
}

// Judge compares a pod of the baseline with the same pod now (absent when
// it is gone) and what the node's engine did to it meanwhile.
func Judge(before PodState, now *PodState, churn *PodChurn) Judgement {
	if now == nil {
		return Judgement{Outcome: Replaced, Why: "pod gone"}
	}
	if now.UID != before.UID {
		return Judgement{Outcome: Replaced, Why: fmt.Sprintf("pod UID %s -> %s", short(before.UID), short(now.UID))}
	}
	j := Judgement{Outcome: Kept}
	var why []string
	for _, name := range sortedContainerNames(before.Containers) {
		b, n := before.Containers[name], now.Containers[name]
		if d := n.RestartCount - b.RestartCount; d > 0 {
			j.Restarts += d
		}
		if n.ID == b.ID {
			continue
		}
		// A new instance: the old one stopped on its own (or was killed
		// for its failed liveness probe), or the kubelet stopped it.
		o := Recreated
		if churn != nil && churn.sandboxCreated == 0 {
			id := trimID(b.ID)
			if (churn.died[id] && !churn.killed[id]) || (churn.killed[id] && churn.probeKilled[name]) {
				o = Restarted
			}
		}
		j.Outcome = worse(j.Outcome, o)
		why = append(why, fmt.Sprintf("%s %s: %s -> %s (restarts %d -> %d)", name, o, short(trimID(b.ID)), short(trimID(n.ID)), b.RestartCount, n.RestartCount))
	}
	if churn != nil && churn.sandboxCreated > 0 {
		j.Outcome = worse(j.Outcome, Recreated)
		why = append(why, fmt.Sprintf("%d new sandbox(es)", churn.sandboxCreated))
	}
	// Another IP (or none) for the same sandbox: the runtime no longer
	// reads the sandbox's network as it was made (a dockershim started
	// with another network plugin reports none, and 1.24's kubelet then
	// replaces every sandbox: rancher/rke2#3723); connections to it broke.
	if before.PodIP != "" && now.PodIP != before.PodIP {
		j.Outcome = worse(j.Outcome, Recreated)
		why = append(why, fmt.Sprintf("pod IP %s -> %q", before.PodIP, now.PodIP))
	}
	j.Why = strings.Join(why, "; ")
	return j
}

func sortedContainerNames(m map[string]ContainerState) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// trimID drops the runtime prefix of a containerID (docker://...).
func trimID(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// APIEvent is the part of a Kubernetes event (kubectl get events -o json)
// that tells a liveness kill.
type APIEvent struct {
	InvolvedObject struct {
		UID       string `json:"uid"`
		FieldPath string `json:"fieldPath"`
	} `json:"involvedObject"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// NoteLivenessKills marks, in churn, the containers the kubelet reported
// killing for a failed liveness probe: a "Killing" event whose message
// says "failed liveness probe" (1.7 to 1.18 word it so), or an
// "Unhealthy" one "Liveness probe failed", on spec.containers{name}.
func NoteLivenessKills(churn map[string]*PodChurn, events []APIEvent) {
	for _, e := range events {
		msg := strings.ToLower(e.Message)
		if !(e.Reason == "Killing" && strings.Contains(msg, "failed liveness probe")) && !(e.Reason == "Unhealthy" && strings.HasPrefix(msg, "liveness probe failed")) {
			continue
		}
		name, ok := strings.CutPrefix(e.InvolvedObject.FieldPath, "spec.containers{")
		if !ok {
			continue
		}
		c := churn[e.InvolvedObject.UID]
		if c == nil {
			continue // the engine saw nothing of that pod
		}
		if c.probeKilled == nil {
			c.probeKilled = map[string]bool{}
		}
		c.probeKilled[strings.TrimSuffix(name, "}")] = true
	}
}
