package verdict

import (
	"testing"
	"time"

	"kubelet-toolchain/scripts/internal/cluster/nodes"

	"kubelet-toolchain/scripts/internal/identity/podhash"
)

func ev(action, id, uid, typ, name string, t int64) nodes.Event {
	return nodes.Event{Time: time.Unix(t, 0), Action: action, ID: id, Attributes: map[string]string{
		"io.kubernetes.pod.uid": uid, "io.kubernetes.docker.type": typ, "io.kubernetes.container.name": name}}
}

func pod(uid, id string, restarts int) PodState {
	return PodState{Namespace: "ns", Name: "p", UID: uid, PodIP: "10.244.1.5", Containers: map[string]ContainerState{"app": {ID: "docker://" + id, RestartCount: restarts}}}
}

// withIP is p with another pod IP.
func withIP(p PodState, ip string) PodState { p.PodIP = ip; return p }

func TestJudge(t *testing.T) {
	killed := []nodes.Event{
		ev("kill", "old", "u1", "container", "app", 1),
		ev("die", "old", "u1", "container", "app", 2),
		ev("create", "new", "u1", "container", "app", 3),
	}
	crashed := []nodes.Event{
		ev("die", "old", "u1", "container", "app", 2),
		ev("create", "new", "u1", "container", "app", 3),
	}
	newSandbox := []nodes.Event{
		ev("die", "old", "u1", "container", "app", 2),
		ev("create", "sb2", "u1", "podsandbox", "POD", 3),
		ev("create", "new", "u1", "container", "app", 4),
	}
	for _, tc := range []struct {
		name   string
		now    *PodState
		events []nodes.Event
		want   string
		rs     int
	}{
		{"same containers", ptr(pod("u1", "old", 0)), nil, Kept, 0},
		{"pod gone", nil, nil, Replaced, 0},
		{"new uid", ptr(pod("u2", "x", 0)), nil, Replaced, 0},
		{"killed by the kubelet", ptr(pod("u1", "new", 1)), killed, Recreated, 1},
		{"exited on its own", ptr(pod("u1", "new", 1)), crashed, Restarted, 1},
		{"new sandbox", ptr(pod("u1", "new", 1)), newSandbox, Recreated, 1},
		{"new id, no events seen", ptr(pod("u1", "new", 1)), nil, Recreated, 1},
		{"killed for its liveness probe", ptr(pod("u1", "new", 1)), killed, Restarted, 1},
		{"killed, another container's probe failed", ptr(pod("u1", "new", 1)), killed, Recreated, 1},
		{"killed for its probe, with a new sandbox", ptr(pod("u1", "new", 1)), append(newSandbox, killed[0]), Recreated, 1},
		// Same containers, but the sandbox lost its IP or got another
		// (a shim on another network plugin).
		{"same containers, no pod IP", ptr(withIP(pod("u1", "old", 0), "")), nil, Recreated, 0},
		{"same containers, another pod IP", ptr(withIP(pod("u1", "old", 0), "10.244.1.9")), nil, Recreated, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			churn := ChurnByPod(tc.events)
			var e APIEvent
			e.InvolvedObject.UID, e.Reason = "u1", "Killing"
			e.Message = "Killing container with id docker://app:Container failed liveness probe.. Container will be killed and recreated."
			switch tc.name {
			case "killed for its liveness probe", "killed for its probe, with a new sandbox":
				e.InvolvedObject.FieldPath = "spec.containers{app}"
				NoteLivenessKills(churn, []APIEvent{e})
			case "killed, another container's probe failed":
				e.InvolvedObject.FieldPath = "spec.containers{sidecar}"
				NoteLivenessKills(churn, []APIEvent{e})
			}
			j := Judge(pod("u1", "old", 0), tc.now, churn["u1"])
			if j.Outcome != tc.want || j.Restarts != tc.rs {
				t.Fatalf("Judge = %s, %d restarts (%s); want %s, %d", j.Outcome, j.Restarts, j.Why, tc.want, tc.rs)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestPredictionHeld(t *testing.T) {
	for _, tc := range []struct {
		outcome, predicted string
		held               bool
	}{
		{Kept, Kept, true}, {Restarted, Kept, true}, {Recreated, Recreated, true},
		{Recreated, Kept, false}, {Kept, Recreated, false}, {Replaced, Recreated, false},
	} {
		if got := (PodReport{Outcome: tc.outcome, Predicted: tc.predicted}).PredictionHeld(); got != tc.held {
			t.Errorf("%s predicted %s: held = %v", tc.outcome, tc.predicted, got)
		}
	}
}

// The rehearsal reads the preflight's typed outcome, not its wording.
func TestPodVerdictIsTyped(t *testing.T) {
	for _, tc := range []struct{ words, outcome, want string }{
		{"recreated (pod replaced)", podhash.OutcomeReplaced, Replaced},
		{"anything at all", podhash.OutcomeRecreated, Recreated},
		{"kept, spec not enforced: x", podhash.OutcomeKept, Kept},
		{"rejected by 1.9.11: privileged", podhash.OutcomeRejected, "rejected by 1.9.11: privileged"},
		{"recreated (pod replaced)", "", ""}, // words alone predict nothing
	} {
		if got := podVerdict(tc.words, tc.outcome); got != tc.want {
			t.Errorf("podVerdict(%q, %q) = %q, want %q", tc.words, tc.outcome, got, tc.want)
		}
	}
}
