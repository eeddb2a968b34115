package verdict

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// PodState is what the API says of one pod at one moment.
type PodState struct {
	Namespace, Name, UID, Node string
	// Owner is kind/name of the controller, "" for a bare pod; Mirror is
	// set for a static pod's mirror (its UID is the static pod's).
	Owner  string
	Mirror bool
	Ready  bool
	Phase  string
	// Containers by name (init containers are not compared: they ran once).
	Containers map[string]ContainerState
	// Unscheduled is the PodScheduled condition's "reason: message" while
	// it is False (no node fits), for the operator.
	Unscheduled string
	// PodIP is status.podIP: the sandbox's address (the node's for
	// hostNetwork), "" until the kubelet reports one.
	PodIP string
}

// ContainerState is one entry of status.containerStatuses.
type ContainerState struct {
	ID           string // docker://<id>, "" while not created
	RestartCount int
	Ready        bool
	// Waiting is state.waiting's "reason: message" (ErrImageNeverPull,
	// CrashLoopBackOff, ...); LastTerminated is lastState.terminated's
	// "reason (exit code N)". Both "" when the API says nothing.
	Waiting, LastTerminated string
}

// Completed says the pod ran to its end (a Job's): nothing of it runs,
// and it is never Ready.
func (p PodState) Completed() bool { return p.Phase == "Succeeded" || p.Phase == "Failed" }

// Key names a pod within the cluster.
func (p PodState) Key() string { return p.Namespace + "/" + p.Name }

// WhyNotReady says, one line each, why the API has the pod not Ready: it
// is unscheduled, or which containers are not Ready and what they wait
// for or how they last ended.
func (p PodState) WhyNotReady() []string {
	var out []string
	if p.Unscheduled != "" {
		out = append(out, "unscheduled: "+p.Unscheduled)
	}
	for _, name := range sortedContainerNames(p.Containers) {
		c := p.Containers[name]
		if c.Ready {
			continue
		}
		var why []string
		if c.Waiting != "" {
			why = append(why, "waiting: "+c.Waiting)
		}
		if c.LastTerminated != "" {
			why = append(why, "last terminated: "+c.LastTerminated)
		}
		if len(why) == 0 {
			why = append(why, "not Ready") // running, its readiness probe failing
		}
		out = append(out, fmt.Sprintf("container %s: %s", name, strings.Join(why, "; ")))
	}
	return out
}

// apiPod is the part of a v1.Pod the rehearsal reads.
type apiPod struct {
	Metadata struct {
		Namespace       string            `json:"namespace"`
		Name            string            `json:"name"`
		UID             string            `json:"uid"`
		Annotations     map[string]string `json:"annotations"`
		OwnerReferences []struct {
			Kind       string `json:"kind"`
			Name       string `json:"name"`
			Controller *bool  `json:"controller"`
		} `json:"ownerReferences"`
		DeletionTimestamp *string `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		PodIP      string `json:"podIP"`
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
		ContainerStatuses []struct {
			Name         string `json:"name"`
			ContainerID  string `json:"containerID"`
			RestartCount int    `json:"restartCount"`
			Ready        bool   `json:"ready"`
			State        struct {
				Waiting *struct {
					Reason  string `json:"reason"`
					Message string `json:"message"`
				} `json:"waiting"`
			} `json:"state"`
			LastState struct {
				Terminated *struct {
					Reason   string `json:"reason"`
					ExitCode int    `json:"exitCode"`
				} `json:"terminated"`
			} `json:"lastState"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

// ParsePods reads a `kubectl get pods -o json` list: every pod except
// those being deleted, by key.
func ParsePods(raw []byte) (map[string]PodState, error) {
	var list struct {
		Items []apiPod `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("reading kubectl's pod list: %w", err)
	}
	out := map[string]PodState{}
	for _, p := range list.Items {
		if p.Metadata.DeletionTimestamp != nil {
			continue
		}
		s := PodState{
			Namespace: p.Metadata.Namespace, Name: p.Metadata.Name, UID: p.Metadata.UID,
			Node: p.Spec.NodeName, Phase: p.Status.Phase, PodIP: p.Status.PodIP, Containers: map[string]ContainerState{},
		}
		_, s.Mirror = p.Metadata.Annotations["kubernetes.io/config.mirror"]
		if s.Mirror {
			// The mirror pod's own UID is the API server's; the static
			// pod's (the one the kubelet runs it under) is the annotation.
			s.UID = p.Metadata.Annotations["kubernetes.io/config.mirror"]
		}
		for _, o := range p.Metadata.OwnerReferences {
			if o.Controller != nil && *o.Controller {
				s.Owner = o.Kind + "/" + o.Name
			}
		}
		for _, c := range p.Status.Conditions {
			if c.Type == "Ready" {
				s.Ready = c.Status == "True"
			}
			if c.Type == "PodScheduled" && c.Status == "False" {
				s.Unscheduled = reasonMessage(c.Reason, c.Message)
			}
		}
		for _, c := range p.Status.ContainerStatuses {
			cs := ContainerState{ID: c.ContainerID, RestartCount: c.RestartCount, Ready: c.Ready}
			if w := c.State.Waiting; w != nil {
				cs.Waiting = reasonMessage(w.Reason, w.Message)
			}
			if t := c.LastState.Terminated; t != nil {
				cs.LastTerminated = fmt.Sprintf("%s (exit code %d)", t.Reason, t.ExitCode)
			}
			s.Containers[c.Name] = cs
		}
		out[s.Key()] = s
	}
	return out, nil
}

// reasonMessage joins an API reason and message on one line (a message
// may span several).
func reasonMessage(reason, message string) string {
	message = strings.Join(strings.Fields(message), " ")
	switch {
	case reason == "":
		return message
	case message == "":
		return reason
	}
	return reason + ": " + message
}

// SortedKeys returns the keys of pods in order.
func SortedKeys(pods map[string]PodState) []string {
	keys := make([]string, 0, len(pods))
	for k := range pods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
