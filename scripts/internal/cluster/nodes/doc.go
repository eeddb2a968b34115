// Package nodes makes the upgrade rehearsal's nodes: Docker containers
// (kind-style) on the rehearsal's own engine, each running its own dockerd
// and a kubelet under scripts/node/supervise.sh, whose kubelet can be
// switched in place while dockerd and the pods' containers keep running.
//
// The node image is a Debian root filesystem made by mmdebstrap and cached
// by its package list and the Debian suite's InRelease (EnsureImage). A
// Cluster says where things live on the host; Cluster.Create starts a node;
// Node.StartKubelet starts or switches its kubelet synchronously.
// Everything made on the engine carries LabelRehearsal=<repo root> and
// LabelCluster=<cluster name>: RemoveAll removes exactly the former,
// RemoveCluster exactly both.
package nodes
