package verdict

import (
	"reflect"
	"testing"
)

// A `kubectl get pods -o json` list as a 1.9 API server gives it: a pod
// whose image the node does not have, one crash-looping, one no node fits
// and one Ready.
const stuckPods = `{
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {
      "apiVersion": "v1",
      "kind": "Pod",
      "metadata": {"name": "web-7d9f8c-x2x9q", "namespace": "default", "uid": "3f1c0a52-1b2e-11e9-9d2a-0242ac110003"},
      "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "web:1.0", "imagePullPolicy": "Never"}]},
      "status": {
        "phase": "Pending",
        "conditions": [
          {"type": "Initialized", "status": "True", "lastTransitionTime": "2019-01-18T10:00:00Z"},
          {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [web]"},
          {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2019-01-18T10:00:00Z"}
        ],
        "containerStatuses": [{
          "name": "web", "image": "web:1.0", "imageID": "", "ready": false, "restartCount": 0,
          "state": {"waiting": {"reason": "ErrImageNeverPull", "message": "Container image \"web:1.0\" is not present with pull policy of Never"}},
          "lastState": {}
        }]
      }
    },
    {
      "apiVersion": "v1",
      "kind": "Pod",
      "metadata": {"name": "crash", "namespace": "default", "uid": "5a6b7c8d-1b2e-11e9-9d2a-0242ac110003"},
      "spec": {"nodeName": "node-2", "containers": [{"name": "app", "image": "busybox:1.28"}, {"name": "sidecar", "image": "busybox:1.28"}]},
      "status": {
        "phase": "Running",
        "conditions": [
          {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [app]"},
          {"type": "PodScheduled", "status": "True"}
        ],
        "containerStatuses": [
          {
            "name": "app", "ready": false, "restartCount": 4, "containerID": "docker://0123456789ab",
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "Back-off 1m20s restarting failed container=app pod=crash_default(5a6b7c8d-1b2e-11e9-9d2a-0242ac110003)"}},
            "lastState": {"terminated": {"exitCode": 2, "reason": "Error", "startedAt": "2019-01-18T10:01:00Z", "finishedAt": "2019-01-18T10:01:01Z", "containerID": "docker://0123456789ab"}}
          },
          {
            "name": "sidecar", "ready": true, "restartCount": 0, "containerID": "docker://ba9876543210",
            "state": {"running": {"startedAt": "2019-01-18T10:00:05Z"}},
            "lastState": {}
          }
        ]
      }
    },
    {
      "apiVersion": "v1",
      "kind": "Pod",
      "metadata": {"name": "big", "namespace": "jobs", "uid": "9e8d7c6b-1b2e-11e9-9d2a-0242ac110003"},
      "spec": {"containers": [{"name": "big", "image": "busybox:1.28"}]},
      "status": {
        "phase": "Pending",
        "conditions": [{
          "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
          "message": "0/2 nodes are available: 2 Insufficient memory.", "lastTransitionTime": "2019-01-18T10:00:00Z"
        }],
        "qosClass": "Burstable"
      }
    },
    {
      "apiVersion": "v1",
      "kind": "Pod",
      "metadata": {"name": "ok", "namespace": "default", "uid": "11111111-1b2e-11e9-9d2a-0242ac110003"},
      "spec": {"nodeName": "node-1", "containers": [{"name": "ok", "image": "busybox:1.28"}]},
      "status": {
        "phase": "Running",
        "podIP": "10.244.1.7",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [{"name": "ok", "ready": true, "restartCount": 0, "containerID": "docker://aaaa", "state": {"running": {}}, "lastState": {}}]
      }
    }
  ]
}`

func TestWhyNotReady(t *testing.T) {
	pods, err := ParsePods([]byte(stuckPods))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][]string{
		"default/web-7d9f8c-x2x9q": {`container web: waiting: ErrImageNeverPull: Container image "web:1.0" is not present with pull policy of Never`},
		"default/crash":            {"container app: waiting: CrashLoopBackOff: Back-off 1m20s restarting failed container=app pod=crash_default(5a6b7c8d-1b2e-11e9-9d2a-0242ac110003); last terminated: Error (exit code 2)"},
		"jobs/big":                 {"unscheduled: Unschedulable: 0/2 nodes are available: 2 Insufficient memory."},
		"default/ok":               nil,
	} {
		p, ok := pods[key]
		if !ok {
			t.Errorf("%s not parsed", key)
			continue
		}
		if got := p.WhyNotReady(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: WhyNotReady\n got %q\nwant %q", key, got, want)
		}
	}
	if p := pods["default/ok"]; p.PodIP != "10.244.1.7" {
		t.Errorf("pod IP %q, want status.podIP", p.PodIP)
	}
	if p := pods["jobs/big"]; p.Node != "" || p.Ready {
		t.Errorf("unscheduled pod: node %q Ready %v", p.Node, p.Ready)
	}
}
