// Package packaging groups what packagers take from a built release.
//
// In: a built tree and its binaries (pipeline), CHECKSUMS. Out:
// _output/<release>/dist/ (tarballs, SBOM, .deb, RPM, SRPM, Debian source,
// SHA256SUMS) and _output/repo/ (signed yum and apt repositories).
//
//	dist    the artifacts of one release, and their checks (make package, check-package)
//	quilt   the series exported as quilt patches, one per logical change
//	sbom    the SPDX bill of materials
//	deb     the binary .deb; debsrc the Debian source package
//	rpm     the spec, SRPM and RPM
//	repo    the signed repositories and their checks with dnf and apt
package packaging
