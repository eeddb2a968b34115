#!/usr/bin/env bash
# Installs what the build needs beyond Go itself, when it is missing:
# gcc and libc headers, npm (the C toolchain cgo builds use), git (git apply),
# and for packaging: patch and diff (quilt export and source package checks),
# dpkg-deb and xz (the .deb), rpmbuild and rpm (the SRPM and RPM),
# dpkg-source (the Debian source package), gnupg, createrepo-c and
# apt-utils (make repo) and dnf (make check-repo), and Debian's docker client (the
# preflight's node mode, the e2e, the rehearsal).
set -euo pipefail
missing=()
command -v gcc >/dev/null || missing+=(gcc libc6-dev) # the machine's cc: Go's default cgo for the toolchain's own programs and tests
command -v npm >/dev/null || missing+=(npm) # fetches the pinned C toolchain every cgo build links with (versions.yaml cToolchain)
command -v git >/dev/null || missing+=(git)
command -v patch >/dev/null || missing+=(patch)
command -v diff >/dev/null || missing+=(diffutils) # Essential on Debian; named so a test can say who installs it
command -v dpkg-deb >/dev/null || missing+=(dpkg)
command -v xz >/dev/null || missing+=(xz-utils)
command -v rpmbuild >/dev/null || missing+=(rpm)
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
command -v gpg >/dev/null || missing+=(gnupg) # make repo: signs the packages and the repositories' metadata
command -v createrepo_c >/dev/null || missing+=(createrepo-c) # make repo: the yum repository's metadata
command -v apt-ftparchive >/dev/null || missing+=(apt-utils) # make repo: the apt repository's indices
command -v dnf >/dev/null || missing+=(dnf) # make check-repo: the yum client that installs from the repository
[ -x /usr/bin/docker ] || missing+=(docker.io) # the docker CLI: how the toolchain reads any engine
dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static) # the conformance images FROM busybox; the shell of make check-package's and check-repo's scratch roots
command -v systemctl >/dev/null || missing+=(systemd) # make check-repo: systemctl --root enables units in scratch roots (no systemd runs there)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
command -v go >/dev/null || { echo "Go is required (the toolchain pins go1.26.8 via GOTOOLCHAIN)" >&2; exit 1; }

# What the e2e's kubelets and the rehearsal's nodes need from the kernel
# (docs/machine.md). A module load is a change to the machine no namespace
# can keep apart, so the modules are loaded here, up front and stated,
# before any suite records the machine's kernel settings; a suite that
# loads another one fails its machine check.
die() { echo "prereqs: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root: the e2e and the rehearsal start dockerd, mount and create cgroups"
for m in cpu cpuacct cpuset memory devices freezer blkio pids; do
  grep -qE "^[^ ]+ [^ ]+ cgroup [^ ]*\b$m\b" /proc/mounts ||
    die "no cgroup v1 '$m' hierarchy mounted under /sys/fs/cgroup: kubelets 1.7-1.18 need cgroup v1 (boot with systemd.unified_cgroup_hierarchy=0)"
done
command -v unshare >/dev/null && command -v mountpoint >/dev/null && command -v findmnt >/dev/null || die "unshare, mountpoint and findmnt (util-linux) are needed"
modules=(overlay bridge br_netfilter veth nf_conntrack nf_nat ip_tables iptable_filter iptable_nat
  xt_conntrack xt_MASQUERADE xt_addrtype xt_comment xt_mark xt_multiport xt_nat xt_tcpudp)
if [ -r /proc/modules ]; then
  for m in "${modules[@]}"; do
    grep -q "^$m " /proc/modules || [ -d "/sys/module/$m" ] || {
      echo "loading kernel module $m (needed by the e2e and the rehearsal)"
      modprobe "$m" || die "kernel module $m cannot be loaded (modprobe $m failed)"
    }
  done
fi
# Without module support everything must be built in.
grep -qw overlay /proc/filesystems || die "no overlay filesystem (module overlay): dockerd's overlay2 needs it"
[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || die "no /proc/sys/net/bridge (module br_netfilter): modprobe br_netfilter"
