// Package identity groups the answers to "which containers and pods does
// a kubelet switch keep": what each release derives from a pod, without
// running a kubelet.
//
// In: pods (from the API or static manifests) and the releases' trees.
// Out: container hashes and static pod UIDs per release and variant, and
// the preflight's prediction for a switch.
//
//	podhash     hashes, UIDs, the preflight and the hash cross-check
//	schemagen   a release's type graph (v1.Container, the internal Pod)
//	schemadiff  which fields two releases' graphs differ by, so which containers change
//	go18dump    go-spew dumps rewritten into the official go1.8.3 build's layout
package identity
