#!/usr/bin/env bash
# Stops the e2e's own Docker Engine (tools/engine-up.sh) and undoes what
# it did to the machine: its dockerd and containerd (found by their pid
# files in _output/engine/, and only if those processes run our config
# files), what they left mounted under _output/engine/, and our bridge.
# Nothing outside that is touched: a Docker Engine of the machine's keeps
# running. Idempotent. Images and containers are kept unless --purge.
#
#   tools/engine-down.sh [--purge]     ENGINE_DIR as for engine-up.sh
set -euo pipefail

start_ts=$(date +%s.%N)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${ENGINE_DIR:-$ROOT/_output/engine}
CONTAINERD_SOCK=$OUT/containerd/containerd.sock

purge=0
for a in "$@"; do
	case $a in
	--purge) purge=1 ;;
	*) echo "usage: $0 [--purge]" >&2; exit 2 ;;
	esac
done

log() { echo "engine-down: $*" >&2; }
elapsed() { awk -v s="$start_ts" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1fs", e-s}'; }

# pid_of PIDFILE NAME CONFIG: the pid if it is a live NAME process started
# with our CONFIG file (pids recycle; the machine may run a dockerd too).
pid_of() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]] || return 1
	tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "$3" || return 1
	echo "$pid"
}

# kill_wait PID GRACE NAME: SIGTERM, wait, then SIGKILL.
kill_wait() {
	local pid=$1 grace=$2 name=$3 deadline
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + grace))
	while [[ -d /proc/$pid ]] && ((SECONDS < deadline)); do sleep 0.1; done
	if [[ -d /proc/$pid ]]; then
		log "$name (pid $pid) still running after ${grace}s: SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		while [[ -d /proc/$pid ]]; do sleep 0.1; done
	fi
}

# stop NAME CONFIG GRACE_SECS. dockerd needs its grace to stop containers
# (15 s each at most by default) and unmount them.
stop() {
	local name=$1 config=$2 grace=$3 pidfile=$OUT/$1.pid pid
	if ! pid=$(pid_of "$pidfile" "$name" "$config"); then
		[[ -e $pidfile ]] && log "$pidfile names no $name of ours: removing the stale file"
		rm -f "$pidfile"
		return 0
	fi
	kill_wait "$pid" "$grace" "$name"
	rm -f "$pidfile"
	log "stopped $name (pid $pid)"
	stopped+=("$name")
}

# After a SIGKILLed dockerd or containerd, the shims of our containerd (the
# only ones whose -address is our socket) and their containers live on.
# Containers go through runc with our runtime roots (under our exec-root).
stop_leftovers() {
	local pid root id n=0
	for root in "$OUT"/exec/runtime-*/*/; do
		[[ -d $root ]] || continue
		for id in $(/usr/bin/runc --root "$root" list -q 2>/dev/null); do
			/usr/bin/runc --root "$root" kill --all "$id" KILL 2>/dev/null || true
			/usr/bin/runc --root "$root" delete --force "$id" 2>/dev/null || true
			n=$((n + 1))
		done
	done
	for pid in $(grep -lzxF -- "$CONTAINERD_SOCK" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
		[[ $(cat "/proc/$pid/comm" 2>/dev/null) == containerd-shim* ]] || continue
		kill_wait "$pid" 5 "shim"
		n=$((n + 1))
	done
	((n == 0)) || log "removed $n leftover containers and shims of our engine"
}

# Mount points at or below $OUT, deepest first (overlay rootfs, shm and
# netns mounts, dockerd's bind mount of its data root).
our_mounts() {
	# Field 5 of mountinfo is the mount point, with spaces escaped as \040.
	awk '{print $5}' /proc/self/mountinfo | while read -r m; do
		m=$(printf '%b' "$m")
		[[ $m == "$OUT" || $m == "$OUT"/* ]] && echo "$m"
	done | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-
}

stopped=()
stop dockerd "$OUT/daemon.json" 60
stop containerd "$OUT/containerd.toml" 20
stop_leftovers

# With our daemons gone, anything still mounted there is a leftover.
left=0
while read -r m; do
	[[ -n $m ]] || continue
	umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || { log "cannot unmount $m"; left=1; }
done < <(our_mounts)

# Directories outside $OUT our containerd created (its shims' socket dir),
# deepest first, and only while empty: a machine containerd may use them now.
if [[ -f $OUT/created-dirs ]]; then
	while read -r d; do
		[[ -n $d ]] && rmdir "$d" 2>/dev/null && log "removed $d"
	done < <(sort -r "$OUT/created-dirs")
	rm -f "$OUT/created-dirs"
fi

# Our bridge: the one engine-up recorded creating, and only if it is a bridge.
if bridge=$(cat "$OUT/bridge" 2>/dev/null) && [[ -n $bridge ]]; then
	if ip -d link show "$bridge" 2>/dev/null | grep -qw bridge; then
		ip link del "$bridge" && log "removed bridge $bridge"
	fi
	rm -f "$OUT/bridge"
fi

if ((purge)); then
	if ((left)); then
		log "--purge refused: mounts remain under $OUT"
	else
		rm -rf "$OUT/docker" "$OUT/containerd" "$OUT/exec" "$OUT/key.json" "$OUT/images"
		log "removed the engine's data under $OUT"
	fi
fi

if ((${#stopped[@]})); then
	echo "engine-down: stopped ${stopped[*]} in $(elapsed)"
else
	echo "engine-down: nothing of ours running ($(elapsed))"
fi
exit "$left"
