// Package pipeline groups the build: how a pinned release becomes
// binaries whose sha256 is recorded in CHECKSUMS.
//
// In: versions.yaml (through base/matrix), the module zip, locks/,
// patches/ and overlay/. Out: a patched tree and its binaries under
// _output/<release>/, checked against CHECKSUMS.
//
// The stages, in the order a build runs them:
//
//	source     fetch the module zip (sum-checked), check the official build line
//	restore    vendor/ from the lock (lock, godeps, gomod: the dependency pins)
//	patch      lay the series' patches and overlays over the tree
//	build      the one driver: compile every target (ctoolchain: the pinned
//	           C toolchain; glibc: the symbol-version floor)
//	checksums  compare with, or record in, CHECKSUMS
//
// After a build: smoke (the kubelet really starts), treetest (the in-tree
// tests of the packages the fixes touch), bench (build stages timed).
// plan compares every target's inputs with CHECKSUMS.inputs: which
// targets a change touches, so CI builds those.
package pipeline
