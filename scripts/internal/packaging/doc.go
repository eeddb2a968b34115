// Package packaging groups what packagers take from a built release.
//
// In: a built tree and its binaries (pipeline), CHECKSUMS. Out:
// _output/<release>/dist/ (tarballs, SBOM, .deb, RPM, SRPM, Debian source,
// SHA256SUMS) and _output/repo/v<minor>/ (signed yum and apt repositories,
// one per minor).
//
//	dist    the artifacts of one release, and their checks (make package, check-package)
//	quilt   the series exported as quilt patches, one per logical change
//	sbom    the SPDX bill of materials
//	deb     the binary .deb; debsrc the Debian source package
//	rpm     the spec, SRPM and RPM
//	repo    the signed repositories and their checks with dnf and apt
//	official  what the official packages of the era looked like (layouts, stand-ins)
//	scratchroot  a root rpm and dpkg run scriptlets in: a shell, systemd's tools recorded
package packaging
