#!/bin/bash
# The supervisor of a rehearsal node (a container made by
# scripts/internal/cluster/nodes). tini (PID 1) runs `supervise.sh boot`: it makes
# the node able to run Docker (fresh cgroup v1 hierarchies, shared mounts),
# starts dockerd and then waits on it; the node stops when dockerd does.
# The host drives the rest synchronously through `docker exec`:
#
#   supervise.sh ready                               exit 0 once dockerd answers
#   supervise.sh kubelet RELEASE VARIANT BINARY ARGS...
#       stops the running kubelet (only it: dockerd and the pods' containers
#       keep running) and starts BINARY with ARGS; prints
#       "old=<pid|0> pid=<pid> log=<file>" once the new one runs; a kubelet
#       of 1.23 or older serves its own dockershim: a standalone one is
#       stopped between the two
#   supervise.sh kube-proxy BINARY ARGS...           the same for kube-proxy
#   supervise.sh shim BINARY ARGS...                 the standalone dockershim a
#       kubelet of 1.24+ runs on: kept if it runs as asked, else (re)started;
#       prints "old=.. pid=.. log=.." once it serves CRI
#   supervise.sh stop-kubelet | stop-shim            stops that one only;
#       prints "old=<pid|0>"
#   supervise.sh status                              kubelet=<pid|0> kube-proxy=<pid|0> shim=<pid|0>
#
# Environment (set at create): NODE_NAME, DOCKER_BIP, CLUSTER_CIDR, RUNC_CLAMP
# (a runc wrapper to register as dockerd's default runtime, or empty).
# Logs go to /var/log/node (a host directory): supervise.log, dockerd.log, one
# kubelet-<nn>-<release>-<variant>.log per kubelet run, kube-proxy-<nn>.log,
# dockershim-<nn>.log.
set -euo pipefail

STATE=/run/node
LOGS=/var/log/node
mkdir -p "$STATE" "$LOGS"

log() { echo "supervise: $(date -u +%H:%M:%S.%N | cut -c1-12) $*" >&2; }
die() { log "$*"; exit 1; }

# A fresh cgroup v1 tree: the container's own mounts are read-only and
# cannot be remounted ("mount point is busy"). The same hierarchies as the
# host's (cpu and cpuacct are separate on these hosts; mounting them
# together is refused), read from what Docker mounted here.
setup_cgroups() {
	local line pre post f g name ctl o specs=()
	# Pure bash: forks are slow on a busy machine, and this runs per line.
	while read -r line; do
		pre=${line%% - *} post=${line#* - }
		read -r -a f <<<"$pre"
		read -r -a g <<<"$post"
		[[ ${g[0]} == cgroup && ${f[4]} == /sys/fs/cgroup/* ]] || continue
		name=${f[4]#/sys/fs/cgroup/} ctl=
		for o in ${g[2]//,/ }; do
			[[ $o == rw || $o == ro ]] || ctl+=${ctl:+,}$o
		done
		specs+=("$name:$ctl")
	done </proc/self/mountinfo
	((${#specs[@]})) || die "no cgroup v1 mounts under /sys/fs/cgroup (a cgroup v2 host is not supported)"
	log "unmounting the read-only cgroup tree"
	umount -l /sys/fs/cgroup
	mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
	local s part
	for s in "${specs[@]}"; do
		name=${s%%:*} ctl=${s#*:}
		mkdir -p "/sys/fs/cgroup/$name"
		mount -t cgroup -o "$ctl" cgroup "/sys/fs/cgroup/$name"
		# "net_cls,net_prio" is also reachable as net_cls and net_prio.
		if [[ $name == *,* ]]; then
			for part in ${name//,/ }; do
				[[ -e /sys/fs/cgroup/$part ]] || ln -s "$name" "/sys/fs/cgroup/$part"
			done
		fi
	done
	log "cgroup v1 hierarchies: ${specs[*]}"
}

# Kubelet and kube-proxy write sysctls at start. /proc/sys/net is this
# node's network namespace, so it is made writable. The rest of /proc/sys
# (vm, kernel) is the machine's and stays read-only; the entries kubelets
# write there are shadowed by files holding the Linux defaults
# (shadow-sysctls.sh), so every node starts as a fresh machine would,
# whatever the machine's values, and the kubelet's writes land in the node.
setup_sysctls() {
	mount --bind /proc/sys/net /proc/sys/net
	mount -o remount,bind,rw /proc/sys/net
	"${BASH_SOURCE[0]%/*}/shadow-sysctls.sh" mount "$STATE/sysctls" node
}

# iptables-legacy: the era's kube-proxy (1.9) predates the nft backend.
# Pods reach the outside (the API server on the host's bridge address)
# masqueraded; traffic between pods of the cluster is not.
setup_iptables() {
	update-alternatives --quiet --set iptables /usr/sbin/iptables-legacy
	update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-legacy
	iptables -t nat -C POSTROUTING -s "$CLUSTER_CIDR" ! -d "$CLUSTER_CIDR" -j MASQUERADE 2>/dev/null ||
		iptables -t nat -A POSTROUTING -s "$CLUSTER_CIDR" ! -d "$CLUSTER_CIDR" -j MASQUERADE
}

start_dockerd() {
	# The second socket is in a host directory: the host's preflight reads
	# the containers' hash labels from it (node mode), read-only. Both are
	# root's alone (--group root): the image's docker gid may be some other
	# group on the host.
	local args=(--host unix:///var/run/docker.sock --host unix:///host-run/docker.sock --group root --storage-driver=overlay2
		--exec-opt native.cgroupdriver=cgroupfs --bip "$DOCKER_BIP"
		--default-ipc-mode=shareable)
	# kubelet 1.7 leaves the sandbox IPC mode empty: shareable, as on the host engine.
	if [[ -n ${RUNC_CLAMP:-} ]]; then
		args+=(--add-runtime "clamped=$RUNC_CLAMP" --default-runtime=clamped)
	fi
	/usr/sbin/dockerd "${args[@]}" >>"$LOGS/dockerd.log" 2>&1 &
	echo $! >"$STATE/dockerd.pid"
	local deadline=$((SECONDS + 60))
	until docker version >/dev/null 2>&1; do
		[[ -d /proc/$(cat "$STATE/dockerd.pid") ]] || die "dockerd exited during start-up (see dockerd.log)"
		((SECONDS < deadline)) || die "dockerd did not answer within 60s"
		sleep 0.1
	done
	touch "$STATE/ready"
	log "dockerd ready (pid $(cat "$STATE/dockerd.pid"))"
}

# stop_pidfile FILE: SIGTERM the process FILE names, wait up to 30 s,
# then SIGKILL. Prints the pid that was stopped (0 if none ran).
stop_pidfile() {
	local pid
	pid=$(cat "$1" 2>/dev/null || echo 0)
	if [[ $pid != 0 && -d /proc/$pid ]]; then
		kill -TERM "$pid" 2>/dev/null || true
		local deadline=$((SECONDS + 30))
		while [[ -d /proc/$pid ]] && ((SECONDS < deadline)); do sleep 0.05; done
		if [[ -d /proc/$pid ]]; then
			kill -KILL "$pid" 2>/dev/null || true
			while [[ -d /proc/$pid ]]; do sleep 0.05; done
		fi
		# tini reaps it; a zombie has no /proc/<pid>/exe but keeps the dir
		# until reaped, which the loops above wait for.
	else
		pid=0
	fi
	rm -f "$1"
	echo "$pid"
}

# next_run NAME: the next run number for NAME's logs (01, 02, ...).
next_run() {
	local f=$STATE/$1.runs n
	n=$(($(cat "$f" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$f"
	printf '%02d' "$n"
}

# start_component NAME LOGFILE BINARY ARGS...: stops the running NAME,
# runs $between (a command, when set), starts BINARY detached (in its own
# session; tini, PID 1, reaps it) and prints "old=.. pid=.. log=..".
start_component() {
	local name=$1 logf=$2 bin=$3 old pid
	shift 3
	[[ -x $bin ]] || die "$name binary $bin is not an executable in the node"
	old=$(stop_pidfile "$STATE/$name.pid")
	${between:-}
	echo "# $bin $*" >"$logf"
	setsid "$bin" "$@" </dev/null >>"$logf" 2>&1 &
	pid=$!
	echo "$pid" >"$STATE/$name.pid"
	# Started means running the requested binary (setsid has exec'd).
	local deadline=$((SECONDS + 10))
	until [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$(readlink -f "$bin")" ]]; do
		if [[ ! -d /proc/$pid ]]; then
			log "$name exited at once; last lines of $logf:"
			tail -n 20 "$logf" >&2
			exit 1
		fi
		((SECONDS < deadline)) || die "$name (pid $pid) did not exec $bin"
		sleep 0.02
	done
	echo "old=$old pid=$pid log=$logf"
}

# stop_shim_for_kubelet: stops a running standalone dockershim for the
# kubelet $release starting next.
stop_shim_for_kubelet() {
	[[ $(pid_or_0 dockershim) != 0 ]] || return 0
	rm -f "$STATE/dockershim.cmd"
	log "dockershim (pid $(stop_pidfile "$STATE/dockershim.pid")) stopped for kubelet $release"
}

pid_or_0() {
	local pid
	pid=$(cat "$STATE/$1.pid" 2>/dev/null || echo 0)
	[[ -d /proc/$pid ]] && echo "$pid" || echo 0
}

case ${1:-} in
boot)
	# The node's own log outlives its container (docker logs does not).
	exec 2> >(tee -a "$LOGS/supervise.log" >&2)
	log "node ${NODE_NAME:?} booting"
	setup_cgroups
	mount --make-rshared /
	setup_sysctls
	setup_iptables
	log "node set up; starting dockerd"
	start_dockerd
	# The node lives as long as its dockerd; on SIGTERM (docker stop) the
	# kubelet, its shim and kube-proxy go first, then dockerd stops the
	# containers.
	trap 'stop_pidfile $STATE/kubelet.pid >/dev/null; stop_pidfile $STATE/dockershim.pid >/dev/null; stop_pidfile $STATE/kube-proxy.pid >/dev/null; kill -TERM $(cat $STATE/dockerd.pid) 2>/dev/null' TERM INT
	wait "$(cat "$STATE/dockerd.pid")" || true
	wait "$(cat "$STATE/dockerd.pid")" 2>/dev/null || true
	log "dockerd exited"
	;;
ready)
	[[ -e $STATE/ready ]] && docker version >/dev/null 2>&1
	;;
kubelet)
	(($# >= 3)) || die "usage: $0 kubelet RELEASE VARIANT BINARY ARGS..."
	release=$2 variant=$3 bin=$4
	shift 4
	minor=${release#*.} minor=${minor%%.*}
	# A kubelet of 1.23 or older serves dockershim itself, on the socket a
	# standalone shim holds: the old kubelet goes, then the shim, then the
	# new kubelet starts.
	((minor >= 24)) || between=stop_shim_for_kubelet
	start_component kubelet "$LOGS/kubelet-$(next_run kubelet)-$release-$variant.log" "$bin" "$@"
	;;
kube-proxy)
	(($# >= 2)) || die "usage: $0 kube-proxy BINARY ARGS..."
	bin=$2
	shift 2
	start_component kube-proxy "$LOGS/kube-proxy-$(next_run kube-proxy).log" "$bin" "$@"
	;;
shim)
	(($# >= 2)) || die "usage: $0 shim BINARY ARGS..."
	bin=$2
	shift 2
	# A shim serving as asked is kept: the kubelets 1.24 <-> 1.25 switch
	# on it, as a node does.
	want="$(readlink -f "$bin") $*"
	pid=$(pid_or_0 dockershim)
	if [[ $pid != 0 && $(cat "$STATE/dockershim.cmd" 2>/dev/null) == "$want" ]]; then
		echo "old=$pid pid=$pid log=$(cat "$STATE/dockershim.log")"
		exit 0
	fi
	logf=$LOGS/dockershim-$(next_run dockershim).log
	out=$(start_component dockershim "$logf" "$bin" "$@")
	echo "$want" >"$STATE/dockershim.cmd"
	echo "$logf" >"$STATE/dockershim.log"
	# A kubelet dials its runtime once at start: return once it is served.
	deadline=$((SECONDS + 30))
	until grep -q "Serving CRI v1alpha2" "$logf"; do
		[[ -d /proc/$(cat "$STATE/dockershim.pid") ]] || { log "dockershim exited; last lines of $logf:"; tail -n 20 "$logf" >&2; exit 1; }
		((SECONDS < deadline)) || die "dockershim did not serve CRI within 30s (see $logf)"
		sleep 0.05
	done
	echo "$out"
	;;
stop-kubelet)
	echo "old=$(stop_pidfile "$STATE/kubelet.pid")"
	;;
stop-shim)
	rm -f "$STATE/dockershim.cmd"
	echo "old=$(stop_pidfile "$STATE/dockershim.pid")"
	;;
status)
	echo "kubelet=$(pid_or_0 kubelet) kube-proxy=$(pid_or_0 kube-proxy) shim=$(pid_or_0 dockershim)"
	;;
*)
	die "usage: $0 boot|ready|kubelet|kube-proxy|shim|stop-kubelet|stop-shim|status"
	;;
esac
