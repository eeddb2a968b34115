// Package cluster groups the upgrade rehearsal: a throwaway cluster on
// this machine, its kubelets switched, and the judgement of what happened.
//
// In: built control planes and kubelets (pipeline), the operator's
// manifests, the preflight (identity). Out: a verdict per pod,
// _output/rehearsal/report.json.
//
//	controlplane  etcd, API server, controller manager and scheduler, locked down
//	nodes         kind-style nodes: Docker containers running dockerd and a kubelet
//	rehearsal     the walk: start, apply, switch FROM -> TO -> FROM -> TO with faults
//	verdict       the judgement, kept apart from running: outcomes against predictions
package cluster
