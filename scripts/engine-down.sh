#!/usr/bin/env bash
# Stops the dockerd and containerd that scripts/engine-up.sh started (found
# by their pid files in _output/engine/) and unmounts what the engine left
# mounted. Idempotent. Images and containers in the engine's data directory
# are kept unless --purge is given.
#
#   scripts/engine-down.sh [--purge]
set -euo pipefail

start_ts=$(date +%s.%N)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/_output/engine
DOCKER_DATA=/var/lib/docker
# Where the engine mounts: data dirs and the runtime state dirs.
ENGINE_MOUNT_DIRS=("$DOCKER_DATA" /var/lib/containerd /run/docker /var/run/docker /run/containerd /var/run/containerd)

purge=0
for a in "$@"; do
	case $a in
	--purge) purge=1 ;;
	*) echo "usage: $0 [--purge]" >&2; exit 2 ;;
	esac
done

log() { echo "engine-down: $*" >&2; }
elapsed() { awk -v s="$start_ts" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1fs", e-s}'; }

# pid_of PIDFILE NAME: the pid if it is running and is NAME (pids recycle).
pid_of() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 1
	[[ -n $pid && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]] && echo "$pid"
}

# stop NAME GRACE_SECS: SIGTERM, wait, then SIGKILL. dockerd needs its grace
# to stop containers (15 s each at most by default) and unmount them.
stop() {
	local name=$1 grace=$2 pidfile=$OUT/$1.pid pid deadline
	if ! pid=$(pid_of "$pidfile" "$name"); then
		rm -f "$pidfile"
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + grace))
	while [[ -d /proc/$pid ]] && ((SECONDS < deadline)); do sleep 0.1; done
	if [[ -d /proc/$pid ]]; then
		log "$name (pid $pid) still running after ${grace}s: SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		while [[ -d /proc/$pid ]]; do sleep 0.1; done
	fi
	rm -f "$pidfile"
	log "stopped $name (pid $pid)"
	stopped+=("$name")
}

# dockerd bind-mounts its data dir onto itself when it is not a mount point
# yet, and leaves this marker until it has undone that.
ROOT_MARKER=/run/docker/unmount-on-shutdown

# Mount points below the engine's directories, deepest first. The
# directories themselves may be the machine's own mounts: only the data dir,
# and only with dockerd's marker.
engine_mounts() {
	local d
	# Field 5 of mountinfo is the mount point, with spaces escaped as \040.
	awk '{print $5}' /proc/self/mountinfo | while read -r m; do
		m=$(printf '%b' "$m")
		if [[ $m == "$DOCKER_DATA" ]]; then
			[[ -e $ROOT_MARKER ]] && echo "$m"
			continue
		fi
		for d in "${ENGINE_MOUNT_DIRS[@]}"; do
			if [[ $m == "$d"/* ]]; then echo "$m"; break; fi
		done
	done | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-
}

stopped=()
stop dockerd 60
stop containerd 20

if /usr/bin/docker version >/dev/null 2>&1; then
	# Somebody else's engine: its mounts and data are not ours to touch.
	log "a dockerd not started by engine-up.sh still answers; leaving it alone"
	((purge)) && { log "--purge refused while that engine runs"; exit 1; }
	exit 0
fi

# With the daemons gone, anything still mounted there is a leftover (e.g.
# after a SIGKILL).
left=0
while read -r m; do
	[[ -n $m ]] || continue
	umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || { log "cannot unmount $m"; left=1; }
done < <(engine_mounts)
((left)) || rm -f "$ROOT_MARKER"

if ((purge)); then
	rm -rf "$DOCKER_DATA"
	log "removed $DOCKER_DATA"
fi

if ((${#stopped[@]})); then
	echo "engine-down: stopped ${stopped[*]} in $(elapsed)"
else
	echo "engine-down: nothing running ($(elapsed))"
fi
exit "$left"
