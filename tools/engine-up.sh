#!/usr/bin/env bash
# Brings up the e2e's own Docker Engine (containerd + dockerd from Debian's
# docker.io) and builds the local test images into it. Idempotent: with our
# engine already running it only rebuilds images whose sources changed.
#
# The engine shares nothing with a Docker Engine the machine may run (an
# operator's dockershim node): its sockets, data, state, pid files and
# config files are all under _output/engine/, it never reads
# /etc/docker/daemon.json or /etc/containerd/config.toml, its containers sit
# on a bridge of its own, and it writes no iptables rule (docker's chains
# have the same names in every dockerd, and a dockerd that starts with
# iptables on deletes and recreates them). It is never some other engine: an
# engine is reused only if our pid files name live processes running our
# config files; anything else on the machine's sockets is ignored.
#
# No systemd needed: the daemons run in the background, logs in
# _output/engine/. tools/engine-down.sh stops them.
#
#   ENGINE_DIR        where the engine keeps everything (default _output/engine;
#                     the rehearsal runs one of its own under _output/rehearsal/)
#   ENGINE_BRIDGE     bridge name (default kubelet-e2e0; E2E_BRIDGE is read too)
#   ENGINE_BRIDGE_CIDR its address (default 198.18.201.1/24, in the RFC 2544
#                     benchmarking range: unlikely on a real network)
set -euo pipefail

start_ts=$(date +%s.%N)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${ENGINE_DIR:-$ROOT/_output/engine}
DOCKER_SOCK=$OUT/docker.sock
CONTAINERD_DIR=$OUT/containerd
CONTAINERD_SOCK=$CONTAINERD_DIR/containerd.sock
CONTAINERD_CONFIG=$OUT/containerd.toml
DOCKERD_CONFIG=$OUT/daemon.json
BRIDGE=${ENGINE_BRIDGE:-${E2E_BRIDGE:-kubelet-e2e0}}
BRIDGE_CIDR=${ENGINE_BRIDGE_CIDR:-${E2E_BRIDGE_CIDR:-198.18.201.1/24}}
# The label the e2e framework checks before it lists or removes anything:
# proof that the engine it talks to is this checkout's own.
ENGINE_LABEL=io.kubelet-toolchain.e2e-engine
# The Debian client (a newer one may come first on PATH), always pointed at
# our socket: never the default one.
DOCKER=(/usr/bin/docker -H "unix://$DOCKER_SOCK")
WAIT_SECS=${ENGINE_WAIT_SECS:-60}
mkdir -p "$OUT"
cd "$ROOT"

log() { echo "engine-up: $*" >&2; }
die() { log "$*"; exit 1; }
elapsed() { awk -v s="$start_ts" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1fs", e-s}'; }

# ours PIDFILE NAME CONFIG: PIDFILE names a live NAME process started with
# our CONFIG file on its command line (a pid file can outlive its process
# and the pid be recycled, possibly by the machine's own dockerd).
ours() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]] || return 1
	tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "$3"
}

tail_log() { log "last lines of $1:"; tail -n 30 "$1" >&2 || true; }

engine_answers() { "${DOCKER[@]}" version >/dev/null 2>&1; }

install_packages() {
	local missing=0
	for b in /usr/sbin/dockerd /usr/bin/containerd /usr/bin/runc /usr/bin/docker; do
		[[ -x $b ]] || missing=1
	done
	command -v iptables >/dev/null || missing=1 # docker.io's dependency, unused here
	command -v ip >/dev/null || missing=1
	((missing)) || return 0
	log "installing docker.io, iptables and iproute2"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >"$OUT/apt.log" 2>&1 || { tail_log "$OUT/apt.log"; die "apt-get update failed"; }
	apt-get install -y -qq --no-install-recommends docker.io iptables iproute2 >>"$OUT/apt.log" 2>&1 ||
		{ tail_log "$OUT/apt.log"; die "apt-get install failed"; }
}

# Unix socket paths are limited to 107 bytes; a deep checkout would make
# the daemons fail with an obscure bind error.
check_paths() {
	local s
	for s in "$DOCKER_SOCK" "$CONTAINERD_SOCK.ttrpc" "$OUT/exec/libnetwork/0123456789ab.sock"; do
		((${#s} <= 107)) || die "socket path too long (${#s} > 107 bytes): $s; use a shorter checkout path"
	done
}

# A negative oom_score_adj needs CAP_SYS_RESOURCE; without it runc init dies
# ("can't get final child's PID from pipe") whenever kubelet asks for one.
needs_clamp() {
	! (echo -1000 >/proc/self/oom_score_adj) 2>/dev/null
}

build_clamp() {
	local bin=$OUT/runc-clamp src=$ROOT/tools/runcclamp
	if [[ ! -x $bin || -n $(find "$src" -name '*.go' ! -name '*_test.go' -newer "$bin") ]]; then
		# Build beside it and rename: runc may be running it right now.
		go build -o "$bin.new" ./tools/runcclamp
		mv -f "$bin.new" "$bin"
	fi
}

# ensure_bridge: our own bridge, not docker0. dockerd only creates a
# bridge of the default name itself; ours is made here, recorded in
# $OUT/bridge for engine-down, and its subnet must be free on the machine.
ensure_bridge() {
	local net
	if ip link show "$BRIDGE" >/dev/null 2>&1; then
		[[ $(cat "$OUT/bridge" 2>/dev/null) == "$BRIDGE" ]] ||
			die "a link named $BRIDGE exists but engine-up did not create it; set ENGINE_BRIDGE"
		ip -4 -o addr show dev "$BRIDGE" | grep -qF " $BRIDGE_CIDR " ||
			die "our bridge $BRIDGE lacks $BRIDGE_CIDR; tools/engine-down.sh removes it"
		ip link set "$BRIDGE" up
		return 0
	fi
	net=$(ip -4 route show root "$BRIDGE_CIDR" 2>/dev/null; ip -4 route show match "$BRIDGE_CIDR" 2>/dev/null | grep -v '^default' || true)
	[[ -z $net ]] || die "$BRIDGE_CIDR overlaps a route of this machine ($net); set ENGINE_BRIDGE_CIDR"
	# Record the name first: a failure half-way still leaves engine-down
	# able to remove it.
	echo "$BRIDGE" >"$OUT/bridge"
	ip link add name "$BRIDGE" type bridge
	ip addr add "$BRIDGE_CIDR" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	log "created bridge $BRIDGE ($BRIDGE_CIDR)"
}

# write_file PATH: stdin to PATH, atomically.
write_file() { cat >"$1.tmp" && mv -f "$1.tmp" "$1"; }

write_configs() {
	# containerd reads /etc/containerd/config.toml unless told otherwise.
	# The CRI plugin is off: nothing here uses it, and it would read the
	# machine's CNI configuration.
	write_file "$CONTAINERD_CONFIG" <<-EOF
		version = 2
		root = "$CONTAINERD_DIR/root"
		state = "$CONTAINERD_DIR/state"
		disabled_plugins = ["io.containerd.grpc.v1.cri"]
		[grpc]
		  address = "$CONTAINERD_SOCK"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$CONTAINERD_DIR/opt"
	EOF

	local runtimes=""
	if needs_clamp; then
		build_clamp
		runtimes='"runtimes": {"clamped": {"path": "'$OUT/runc-clamp'"}}, "default-runtime": "clamped",'
		log "no CAP_SYS_RESOURCE: runc goes through runc-clamp (oomScoreAdj >= 0)"
	fi
	# --config-file: /etc/docker/daemon.json is never read. iptables off:
	# no NAT, no published-port DNAT (the userland proxy serves host ports),
	# and none of the DOCKER / DOCKER-ISOLATION chains a machine dockerd
	# owns under the same names. ip-forward off: the host sysctl is left as
	# it is (host <-> container traffic on the bridge is not forwarded).
	# group root: the socket is root's alone, not the machine's docker
	# group's (whose members were given the machine's engine, not ours).
	write_file "$DOCKERD_CONFIG" <<-EOF
		{
		  "hosts": ["unix://$DOCKER_SOCK"],
		  "group": "root",
		  "containerd": "$CONTAINERD_SOCK",
		  "data-root": "$OUT/docker",
		  "exec-root": "$OUT/exec",
		  "pidfile": "$OUT/dockerd.pid",
		  "deprecated-key-path": "$OUT/key.json",
		  "labels": ["$ENGINE_LABEL=$ROOT"],
		  "bridge": "$BRIDGE",
		  "iptables": false,
		  "ip-masq": false,
		  "ip-forward": false,
		  "userland-proxy": true,
		  "exec-opts": ["native.cgroupdriver=cgroupfs"],
		  "storage-driver": "overlay2",
		  $runtimes
		  "default-ipc-mode": "shareable"
		}
	EOF
}

# start_bg NAME LOG CMD...: a daemon in its own session, detached from this
# shell, so it outlives the caller. Its pid is left in $bg_pid.
start_bg() {
	local name=$1 logf=$2
	shift 2
	setsid nohup "$@" </dev/null >>"$logf" 2>&1 &
	bg_pid=$!
	log "started $name (pid $bg_pid), log $logf"
}

# running PID: the process lives (neither gone nor a zombie). Its name is
# no proof either way: until the shell forked by start_bg has exec'd
# setsid, nohup and then the daemon, it is still called engine-up.sh (CI
# once failed a live containerd on that).
running() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) } # the name, in parentheses, may hold spaces
	[[ ${stat%% *} != Z ]]
}

# wait_for NAME PID LOG CHECK...: bounded wait for CHECK to succeed; fails
# early, with the log tail, if the daemon died.
wait_for() {
	local name=$1 pid=$2 logf=$3 deadline=$((SECONDS + WAIT_SECS))
	shift 3
	until "$@" >/dev/null 2>&1; do
		if ! running "$pid"; then
			tail_log "$logf"
			die "$name exited during start-up"
		fi
		if ((SECONDS >= deadline)); then
			tail_log "$logf"
			die "$name did not come up within ${WAIT_SECS}s"
		fi
		sleep 0.1
	done
}

start_engine() {
	mkdir -p "$CONTAINERD_DIR"
	if ours "$OUT/containerd.pid" containerd "$CONTAINERD_CONFIG"; then
		log "reusing our containerd (pid $(cat "$OUT/containerd.pid"))"
	else
		rm -f "$OUT/containerd.pid"
		# containerd 1.6 puts its shims' sockets in /run/containerd/s
		# whatever its state dir: what we create there, engine-down removes.
		local d
		for d in /run/containerd /run/containerd/s; do
			[[ -e $d ]] || echo "$d" >>"$OUT/created-dirs"
		done
		start_bg containerd "$OUT/containerd.log" /usr/bin/containerd --config "$CONTAINERD_CONFIG"
		echo "$bg_pid" >"$OUT/containerd.pid"
		wait_for containerd "$bg_pid" "$OUT/containerd.log" test -S "$CONTAINERD_SOCK"
	fi

	if ours "$OUT/dockerd.pid" dockerd "$DOCKERD_CONFIG"; then
		log "waiting for our dockerd (pid $(cat "$OUT/dockerd.pid"))"
		wait_for dockerd "$(cat "$OUT/dockerd.pid")" "$OUT/dockerd.log" engine_answers
		return 0
	fi
	# dockerd writes its own pid file and refuses to start while one names
	# a running process: a stale one (ours was SIGKILLed) must go.
	rm -f "$OUT/dockerd.pid"
	start_bg dockerd "$OUT/dockerd.log" /usr/sbin/dockerd --config-file "$DOCKERD_CONFIG"
	wait_for dockerd "$bg_pid" "$OUT/dockerd.log" engine_answers
	[[ $(cat "$OUT/dockerd.pid" 2>/dev/null) == "$bg_pid" ]] ||
		die "dockerd (pid $bg_pid) answers but $OUT/dockerd.pid says $(cat "$OUT/dockerd.pid" 2>/dev/null)"
}

# build_image NAME TAG... : a static binary from tools/images/NAME in an
# otherwise empty image, imported (no registry, no base image). Rebuilt when
# the sha256 of its sources differs from the image's "src" label.
build_image() {
	local name=$1 dir=$ROOT/tools/images/$1 hash tag stale=0
	shift
	hash=$(cd "$ROOT/tools" && find "images/$name" -type f | LC_ALL=C sort |
		xargs sha256sum | sha256sum | cut -c1-16)
	local old=()
	for tag in "$@"; do
		[[ $("${DOCKER[@]}" image inspect -f '{{.Config.Labels.src}}' "$tag" 2>/dev/null) == "$hash" ]] || stale=1
		old+=($("${DOCKER[@]}" image inspect -f '{{.Id}}' "$tag" 2>/dev/null || true))
	done
	((stale)) || return 0

	local stage=$OUT/images/$name
	rm -rf "$stage"
	mkdir -p "$stage/rootfs/tmp"
	chmod 1777 "$stage/rootfs/tmp"
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$stage/rootfs/$name" "$dir"
	tar -C "$stage/rootfs" --owner=0 --group=0 --numeric-owner -cf "$stage/rootfs.tar" .
	"${DOCKER[@]}" import --change "ENTRYPOINT [\"/$name\"]" --change "LABEL src=$hash" \
		"$stage/rootfs.tar" "$1" >/dev/null
	for tag in "${@:2}"; do
		"${DOCKER[@]}" tag "$1" "$tag"
	done
	# Drop the superseded image unless a container still uses it.
	if ((${#old[@]})); then
		"${DOCKER[@]}" image rm "${old[@]}" >/dev/null 2>&1 || true
	fi
	log "built image $* (src $hash)"
}

install_packages
check_paths
if ours "$OUT/dockerd.pid" dockerd "$DOCKERD_CONFIG" && ours "$OUT/containerd.pid" containerd "$CONTAINERD_CONFIG" && engine_answers; then
	state="reused (dockerd pid $(cat "$OUT/dockerd.pid"))"
	# A running dockerd uses the wrapper by path: keep it current.
	if [[ -x $OUT/runc-clamp ]]; then build_clamp; fi
else
	ensure_bridge
	write_configs
	start_engine
	state="started (dockerd pid $(cat "$OUT/dockerd.pid"))"
fi
# kubelet 1.7-1.9, 1.10, 1.11-1.13, 1.18 and 1.20 .. 1.25 default pause images, under
# their own names so no pull is ever attempted.
build_image pause gcr.io/google_containers/pause-amd64:3.0 k8s.gcr.io/pause-amd64:3.1 k8s.gcr.io/pause:3.1 k8s.gcr.io/pause:3.2 k8s.gcr.io/pause:3.4.1 k8s.gcr.io/pause:3.5 k8s.gcr.io/pause:3.6 \
	registry.k8s.io/pause:3.7 registry.k8s.io/pause:3.8
build_image workload e2e.local/workload:1

echo "engine-up: docker $("${DOCKER[@]}" version -f '{{.Server.Version}}') on unix://$DOCKER_SOCK $state, images ready in $(elapsed)"
