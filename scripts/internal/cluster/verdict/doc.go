// Package verdict is the rehearsal's judgement, kept apart from running
// the cluster: what the preflight predicted for every pod (predict), what
// the workloads saw while the kubelets were switched (watch: probes and
// readiness), what became of every pod, read from the API and the nodes'
// engines (judge), and the report that sets one against the other
// (report.json, a table, JUnit).
package verdict
