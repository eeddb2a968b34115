#!/usr/bin/env bash
# Brings up the Docker Engine the node e2e tests run kubelets against, and
# builds the local test images into it. Idempotent: with the engine already
# answering it only rebuilds images whose sources changed.
#
# Machines without systemd: containerd and dockerd are started here in the
# background, logs and pid files in _output/engine/. scripts/engine-down.sh
# stops them.
set -euo pipefail

start_ts=$(date +%s.%N)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/_output/engine
# The Debian client: another, newer client may come first on PATH.
DOCKER=/usr/bin/docker
CONTAINERD_SOCK=/run/containerd/containerd.sock
WAIT_SECS=${ENGINE_WAIT_SECS:-60}
mkdir -p "$OUT"
cd "$ROOT"

log() { echo "engine-up: $*" >&2; }
die() { log "$*"; exit 1; }
elapsed() { awk -v s="$start_ts" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1fs", e-s}'; }

# alive PIDFILE NAME: the pid in PIDFILE is running and is NAME (a stale
# pid file may name a recycled pid).
alive() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 1
	[[ -n $pid && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]]
}

tail_log() { log "last lines of $1:"; tail -n 30 "$1" >&2 || true; }

engine_answers() { "$DOCKER" version >/dev/null 2>&1; }

install_packages() {
	local missing=0
	for b in /usr/sbin/dockerd /usr/bin/containerd /usr/bin/runc "$DOCKER"; do
		[[ -x $b ]] || missing=1
	done
	command -v iptables >/dev/null || missing=1
	((missing)) || return 0
	log "installing docker.io and iptables"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >"$OUT/apt.log" 2>&1 || { tail_log "$OUT/apt.log"; die "apt-get update failed"; }
	apt-get install -y -qq --no-install-recommends docker.io iptables >>"$OUT/apt.log" 2>&1 ||
		{ tail_log "$OUT/apt.log"; die "apt-get install failed"; }
}

# A negative oom_score_adj needs CAP_SYS_RESOURCE; without it runc init dies
# ("can't get final child's PID from pipe") whenever kubelet asks for one.
needs_clamp() {
	! (echo -1000 >/proc/self/oom_score_adj) 2>/dev/null
}

build_clamp() {
	local bin=$OUT/runc-clamp src=$ROOT/e2e/tools/runcclamp/main.go
	if [[ ! -x $bin || $src -nt $bin ]]; then
		# Build beside it and rename: runc may be running it right now.
		go build -o "$bin.new" ./e2e/tools/runcclamp
		mv -f "$bin.new" "$bin"
	fi
}

# start_bg NAME PIDFILE LOG CMD...: a daemon in its own session, detached
# from this shell, so it outlives the caller.
start_bg() {
	local name=$1 pidfile=$2 logf=$3
	shift 3
	setsid nohup "$@" </dev/null >>"$logf" 2>&1 &
	echo $! >"$pidfile"
	log "started $name (pid $!), log $logf"
}

# wait_for NAME PIDFILE LOG CHECK...: bounded wait for CHECK to succeed;
# fails early, with the log tail, if the daemon died.
wait_for() {
	local name=$1 pidfile=$2 logf=$3 deadline=$((SECONDS + WAIT_SECS))
	shift 3
	until "$@" >/dev/null 2>&1; do
		if ! alive "$pidfile" "$name"; then
			tail_log "$logf"
			die "$name exited during start-up"
		fi
		if ((SECONDS >= deadline)); then
			tail_log "$logf"
			die "$name did not come up within ${WAIT_SECS}s"
		fi
		sleep 0.2
	done
}

start_engine() {
	if alive "$OUT/containerd.pid" containerd; then
		log "reusing containerd (pid $(cat "$OUT/containerd.pid"))"
	else
		[[ -S $CONTAINERD_SOCK ]] && log "warning: $CONTAINERD_SOCK exists but no containerd of ours runs; starting one anyway"
		start_bg containerd "$OUT/containerd.pid" "$OUT/containerd.log" /usr/bin/containerd
		wait_for containerd "$OUT/containerd.pid" "$OUT/containerd.log" test -S "$CONTAINERD_SOCK"
	fi

	local args=(
		--containerd="$CONTAINERD_SOCK"
		# No systemd here to delegate cgroups to.
		--exec-opt native.cgroupdriver=cgroupfs
		--storage-driver=overlay2
		# Dockershim-era kubelets share the sandbox's IPC namespace.
		--default-ipc-mode=shareable
	)
	if needs_clamp; then
		build_clamp
		args+=(--add-runtime "clamped=$OUT/runc-clamp" --default-runtime=clamped)
		log "no CAP_SYS_RESOURCE: runc goes through runc-clamp (oomScoreAdj >= 0)"
	fi
	start_bg dockerd "$OUT/dockerd.pid" "$OUT/dockerd.log" /usr/sbin/dockerd "${args[@]}"
	wait_for dockerd "$OUT/dockerd.pid" "$OUT/dockerd.log" engine_answers
}

# build_image NAME TAG... : a static binary from e2e/images/NAME in an
# otherwise empty image, imported (no registry, no base image). Rebuilt when
# the sha256 of its sources differs from the image's "src" label.
build_image() {
	local name=$1 dir=$ROOT/e2e/images/$1 hash tag stale=0
	shift
	hash=$(cd "$ROOT/e2e" && find "images/$name" -type f | LC_ALL=C sort |
		xargs sha256sum | sha256sum | cut -c1-16)
	local old=()
	for tag in "$@"; do
		[[ $("$DOCKER" image inspect -f '{{.Config.Labels.src}}' "$tag" 2>/dev/null) == "$hash" ]] || stale=1
		old+=($("$DOCKER" image inspect -f '{{.Id}}' "$tag" 2>/dev/null || true))
	done
	((stale)) || return 0

	local stage=$OUT/images/$name
	rm -rf "$stage"
	mkdir -p "$stage/rootfs/tmp"
	chmod 1777 "$stage/rootfs/tmp"
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$stage/rootfs/$name" "$dir"
	tar -C "$stage/rootfs" --owner=0 --group=0 --numeric-owner -cf "$stage/rootfs.tar" .
	"$DOCKER" import --change "ENTRYPOINT [\"/$name\"]" --change "LABEL src=$hash" \
		"$stage/rootfs.tar" "$1" >/dev/null
	for tag in "${@:2}"; do
		"$DOCKER" tag "$1" "$tag"
	done
	# Drop the superseded image unless a container still uses it.
	if ((${#old[@]})); then
		"$DOCKER" image rm "${old[@]}" >/dev/null 2>&1 || true
	fi
	log "built image $* (src $hash)"
}

install_packages
if engine_answers; then
	state="already running"
	# A running dockerd uses the wrapper by path: keep it current.
	if [[ -x $OUT/runc-clamp ]]; then build_clamp; fi
else
	start_engine
	state="started"
fi
# kubelet 1.7/1.9 and 1.18 default pause images, under their own names so
# no pull is ever attempted.
build_image pause gcr.io/google_containers/pause-amd64:3.0 k8s.gcr.io/pause:3.2
build_image workload e2e.local/workload:1

echo "engine-up: docker $("$DOCKER" version -f '{{.Server.Version}}') $state, images ready in $(elapsed)"
