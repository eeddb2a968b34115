#!/bin/bash
# Keeps the kernel settings kubelets write at start (sysctls.conf, next to
# this script) apart from the machine: each is a file holding the Linux
# default, bind-mounted over its /proc/sys entry in a mount namespace of
# the kubelet's own. The kubelet reads the default, writes what it wants
# into the file (as it would on a fresh machine) and the machine's value
# stays as it was, whatever it is.
#
#   shadow-sysctls.sh mount DIR node
#       in the caller's mount namespace (a rehearsal node's): every entry
#       outside net/ (a node has a network namespace of its own, whose net/
#       settings are its own).
#   shadow-sysctls.sh exec DIR SHARED [LOGS] -- CMD [ARG...]
#       on the machine: CMD (a kubelet) in a new mount namespace where every
#       entry, net/ included, is shadowed. SHARED (the kubelet's root dir) is
#       made a shared mount first, so the volume mounts the kubelet makes
#       under it still reach the machine's namespace, where dockerd runs.
#       With LOGS, LOGS/pods and LOGS/containers are the kubelet's
#       /var/log/pods and /var/log/containers: no flag of 1.7..1.23 moves
#       them, and a kubelet's container GC removes the log directories of
#       every pod it does not run there (the machine's, another node's).
#
# DIR keeps the files across runs: a kubelet switched in place finds what
# the previous one wrote, as on a real machine. Files that exist are kept.
set -euo pipefail
conf=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/sysctls.conf

die() { echo "shadow-sysctls: $*" >&2; exit 1; }

# shadow DIR SCOPE: SCOPE is node (no net/) or all.
shadow() {
	local dir=$1 scope=$2 path def rest f n=0
	while read -r path def rest; do
		[[ -z $path || $path == \#* ]] && continue
		[[ $scope == node && $path == net/* ]] && continue
		[[ -e /proc/sys/$path ]] ||
			die "/proc/sys/$path does not exist on this kernel (net/bridge: load br_netfilter, see docs/machine.md)"
		f=$dir/$path
		if [[ ! -e $f ]]; then
			mkdir -p "${f%/*}"
			echo "$def" >"$f"
		fi
		mount --bind "$f" "/proc/sys/$path"
		n=$((n + 1))
	done <"$conf"
	echo "shadow-sysctls: $n kernel settings shadowed from $dir" >&2
}

case ${1:-} in
mount)
	(($# == 3)) || die "usage: $0 mount DIR node"
	shadow "$2" "$3"
	;;
exec)
	usage="usage: $0 exec DIR SHARED [LOGS] -- CMD [ARG...]"
	(($# >= 5)) || die "$usage"
	dir=$2 shared=$3 logs=
	if [[ $4 != -- ]]; then
		logs=$4
		shift
	fi
	[[ $4 == -- ]] || die "$usage"
	shift 4
	mkdir -p "$dir" "$shared"
	mountpoint -q "$shared" || mount --bind "$shared" "$shared"
	mount --make-shared "$shared"
	exec unshare --mount --propagation unchanged -- "$0" inner "$dir" "$logs" "$@"
	;;
inner)
	dir=$2 logs=$3
	shift 3
	# The machine's /proc may be a shared mount (systemd makes every mount
	# shared): the binds below must not propagate back to it.
	mount --make-rprivate /proc
	shadow "$dir" all
	if [[ -n $logs ]]; then
		for d in pods containers; do
			mkdir -p "$logs/$d" "/var/log/$d"
			# Only the mount holding it, not SHARED's, is made private here.
			mount --make-private "$(findmnt -n -o TARGET --target "/var/log/$d")"
			mount --bind "$logs/$d" "/var/log/$d"
		done
	fi
	exec "$@"
	;;
*)
	die "usage: $0 mount DIR node | exec DIR SHARED [LOGS] -- CMD [ARG...]"
	;;
esac
