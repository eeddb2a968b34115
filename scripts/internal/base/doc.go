// Package base groups the small helpers every stage shares; none of them
// imports another stage.
//
//	matrix    versions.yaml: the pinned releases, their series and build lines
//	fsutil    the few file operations a build needs to be atomic and reproducible
//	machine   the kernel settings recorded before, and checked after, a run
//	testfile  file helpers for tests
//	testtool  for tests: a missing tool fails the test, never skips it
package base
