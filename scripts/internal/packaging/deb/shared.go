package deb

import "kubelet-toolchain/scripts/internal/base/matrix"

// Relations are the binary package's relationship fields besides Depends,
// shared by the .deb built here and the Debian source package's control.
var Relations = [][2]string{
	// conntrack/ebtables/ethtool/socat: kube-proxy modes, bridge
	// filtering, hairpin checks and port-forward use them when there.
	{"Recommends", "conntrack, ebtables, ethtool, iproute2, socat"},
	// The dockershim of these releases talks to a Docker Engine.
	{"Suggests", "docker.io | docker-ce"},
	// Debian's own kubernetes-node shipped /usr/bin/kubelet too.
	{"Conflicts", "kubernetes-node"},
	{"Replaces", "kubernetes-node"},
}

// Maintainer is the Maintainer of the packages built here.
const Maintainer = maintainer

// CopyrightFile is the machine-readable debian/copyright.
func CopyrightFile(r *matrix.Release) string { return copyrightFile(r) }

// Description is the binary package's Description: a synopsis line, then
// the extended description (each line starting with a space).
func Description(r *matrix.Release, v matrix.Variant, sha256 string) string {
	return description(r, v, sha256)
}
