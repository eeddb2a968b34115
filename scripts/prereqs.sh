#!/usr/bin/env bash
# Installs what the build needs beyond Go itself, when it is missing:
# gcc and libc headers for cgo (1.7/1.9 kubelets need cgo), git (git apply),
# and for packaging: patch (quilt export check), dpkg-deb and xz (the .deb),
# rpmbuild and rpm (the SRPM and RPM), dpkg-source (the Debian source package).
set -euo pipefail
missing=()
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
command -v git >/dev/null || missing+=(git)
command -v patch >/dev/null || missing+=(patch)
command -v dpkg-deb >/dev/null || missing+=(dpkg)
command -v xz >/dev/null || missing+=(xz-utils)
command -v rpmbuild >/dev/null || missing+=(rpm)
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
command -v go >/dev/null || { echo "Go is required (the toolchain pins go1.26.8 via GOTOOLCHAIN)" >&2; exit 1; }
