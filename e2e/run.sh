#!/usr/bin/env bash
# Runs the node e2e suites, side by side, and prints each suite's time.
#
#   e2e/run.sh [suite...]     default: upgrade inspect-hang orphan nodes rehearsal
#
# The Ginkgo suites are labels of e2e/node. Two Ginkgo runs go side by
# side. The host suites (tls, upgrade, inspect-hang, orphan: kubelets on
# this machine) are spread over E2E_PROCS parallel processes (default: one
# more than the cores, at most one per 2 GiB of available memory, at most
# 9). A process runs one spec at a time, on a node that shares nothing a
# kubelet touches with another process's (framework.Slot): its own Docker
# Engine, started here (_output/e2e/engines/<n>: sockets, data, bridge
# kubelet-e2e<n> on 198.18.<210+n>.1/24), its own kubelet and pod host
# ports, and per node its cgroup root, CRI socket, dockershim and kubelet
# roots, pod log dirs and fault proxy.
#
# Beside them on 4 cores or more (E2E_CLUSTER_BESIDE=1), after them on
# fewer (0), the cluster suites (rehearsal, rehearsal-1.8) run on
# E2E_REHEARSALS processes (default one per 4 cores, at least one), each
# with its own rehearsal instance <n> (_output/rehearsal-<n>, engine,
# bridge kubelet-rh<n>, subnet and control plane ports), their output in
# ginkgo-cluster.log, printed when they end. After the host suites, beside
# the rehearsals (or what is left of them), the nodes suite: scripts/internal/cluster/nodes'
# end to end (go test -tags nodes_e2e: the rehearsal's node containers on
# an engine of its own, _output/nodes-e2e/engine, bridge kubelet-nt0,
# 198.18.203.1/24, which it brings up and takes down); it passes only if
# some test passed and none failed or skipped. The conformance suite
# (upstream's e2e_node.test [Conformance] specs of 1.9.11 judging both
# variants, on _output/engine) runs last, alone: it judges specs by how
# often they pass. Each Ginkgo suite gets its JUnit report
# (junit-<suite>.xml) and a summary line.
#
# E2E_SPECS picks specs within the Ginkgo suites by their labels
# (docs/e2e.md, the rule): ci (default: the seeds' own specs and those of
# every build target whose inputs differ from CHECKSUMS.inputs, without
# "extended"), release:<release>[,<release>...] (every spec labelled with
# one of those releases' kubelets or control planes: make test-release),
# extended (only those) or all; E2E_FOCUS, when set, only the specs whose
# text matches it (Ginkgo's --focus). Before the run, a Ginkgo dry run lists the selected specs and
# `toolchain e2e-targets` builds the kubelets and control planes they are
# labelled with (and the nodes suite's), each checked against CHECKSUMS,
# and with a control plane the nodes' image root filesystem (mmdebstrap,
# minutes on a fresh machine, cached per user): none of it inside a
# spec's timeout.
#
# E2E_RUN names the run (default local; CI's is ci, a shard's
# release-<release>): its reports, summaries and Ginkgo logs go to
# _output/e2e/<run>/, so one run's JUnit does not overwrite another's.
#
# The machine's kernel settings and loaded modules are recorded once
# before all suites and checked once after them (toolchain machine): no
# suite's change can hide in, or fail, another's check. Every suite's
# kubelet writes its kernel settings into shadows of its node's own. The
# processes and mounts under _output are recorded too, and checked after
# this run has stopped its engines: whatever a spec left there fails it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/_output/e2e/${E2E_RUN:-local}"
toolchain=("$root/_output/bin/toolchain" --root "$root")
[[ ${E2E_RUN:-local} =~ ^[a-z0-9.-]+$ ]] || { echo "e2e/run.sh: E2E_RUN=$E2E_RUN: want letters, digits, dots and dashes" >&2; exit 2; }
mkdir -p "$out"
start=$(date +%s)

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(upgrade inspect-hang orphan nodes rehearsal)
: "${E2E_SPECS:=ci}"
specs=$("${toolchain[@]}" e2e-targets --filter "$E2E_SPECS") || exit 2
host_suites=() cluster_suites=() nodes=0 conformance=0
for s in "${suites[@]}"; do
  case "$s" in
    tls | upgrade | inspect-hang | orphan) host_suites+=("$s") ;;
    rehearsal | rehearsal-1.8) cluster_suites+=("$s") ;;
    nodes) nodes=1 ;;
    conformance) conformance=1 ;;
    *) echo "e2e/run.sh: unknown suite $s (want tls upgrade inspect-hang orphan rehearsal rehearsal-1.8 nodes conformance)" >&2; exit 2 ;;
  esac
done

cores=$(nproc)
if [ -z "${E2E_PROCS:-}" ]; then
  mem_gib=$(awk '/^MemAvailable:/ {print int($2 / 1048576)}' /proc/meminfo)
  # Measured on 2 cores: 4 processes kept both cores busy all along (specs
  # up to 3 times slower than alone); one more than the cores is the default.
  E2E_PROCS=$(( cores + 1 ))
  (( E2E_PROCS <= mem_gib / 2 )) || E2E_PROCS=$(( mem_gib / 2 ))
  (( E2E_PROCS <= 9 )) || E2E_PROCS=9
  (( E2E_PROCS >= 1 )) || E2E_PROCS=1
fi
# A rehearsal is a control plane and kind-style nodes, busy for minutes:
# one per 4 cores (two side by side on 2 cores ran past their 10 minutes).
: "${E2E_REHEARSALS:=$(( cores >= 8 ? cores / 4 : 1 ))}"
# On 2 cores a rehearsal beside the host suites' processes had its nodes
# Ready 23-29 s after a kubelet switch, against a bound of 40 s, and its
# workloads up in 4 minutes: the bound then measures the machine, not the
# kubelet (a CI run failed its seed rehearsal that way). Beside them only
# where a rehearsal has cores of its own.
: "${E2E_CLUSTER_BESIDE:=$(( cores >= 4 ? 1 : 0 ))}"
[[ $E2E_PROCS =~ ^[1-9]$ ]] || { echo "e2e/run.sh: E2E_PROCS=$E2E_PROCS: want 1..9" >&2; exit 2; }
[[ $E2E_REHEARSALS =~ ^[1-9]$ ]] || { echo "e2e/run.sh: E2E_REHEARSALS=$E2E_REHEARSALS: want 1..9" >&2; exit 2; }
[[ $E2E_CLUSTER_BESIDE =~ ^[01]$ ]] || { echo "e2e/run.sh: E2E_CLUSTER_BESIDE=$E2E_CLUSTER_BESIDE: want 0 or 1" >&2; exit 2; }
engines="$root/_output/e2e/engines"

# engine N up|down: the slot's engine.
engine() {
  ENGINE_DIR="$engines/$1" ENGINE_BRIDGE="kubelet-e2e$1" ENGINE_BRIDGE_CIDR="198.18.$((210 + $1)).1/24" \
    "$root/tools/engine-$2.sh" >"$engines/$1.$2.log" 2>&1
}
engines_down() {
  local n pids=()
  for ((n = 1; n <= E2E_PROCS; n++)); do
    if [ -e "$engines/$n" ]; then engine "$n" down & pids+=($!); fi
  done
  # Only these: a bare wait would also wait for the cluster run.
  for n in "${pids[@]}"; do wait "$n" || true; done
}
# conformance_engine_running: _output/engine's pid file names a live dockerd
# running its config (tools/engine-up.sh's test).
conformance_engine_running() {
  local pid
  pid=$(cat "$root/_output/engine/dockerd.pid" 2>/dev/null) &&
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] &&
    tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "$root/_output/engine/daemon.json"
}
conformance_engine=
conformance_engine_down() {
  [ "$conformance_engine" = ours ] || return 0
  conformance_engine=
  "$root/tools/engine-down.sh" >>"$out/conformance-engine-down.log" 2>&1 ||
    { echo "e2e/run.sh: stopping the conformance engine failed (see $out/conformance-engine-down.log)" >&2; return 1; }
}
cleanup() {
  local n d
  # A cluster run still going (the script was interrupted) ends by its
  # own timeouts and cleanups; its instances are checked after it.
  [ -z "${cluster_pid:-}" ] || wait "$cluster_pid" || true
  for d in "$root"/_output/rehearsal-*; do
    # A rehearsal an interrupted spec left up on its process's instance
    # (this checkout's; the instance is the one free when it started).
    n=${d##*/rehearsal-}
    [[ $n =~ ^[1-9][0-9]*$ ]] || continue
    if [ -e "$d/state.json" ] || [ -e "$d/engine/dockerd.pid" ]; then
      "${toolchain[@]}" rehearsal down --instance "$n" >>"$out/rehearsal-down.log" 2>&1 || echo "e2e/run.sh: rehearsal down --instance $n failed (see $out/rehearsal-down.log)" >&2
    fi
  done
  engines_down
  conformance_engine_down || true
  rm -f "$root/e2e/node/node.test"
}
trap cleanup EXIT

"${toolchain[@]}" machine save --under "$root/_output" "$out/machine.json"
summary=() failed=0
line() { summary+=("$(printf '%-14s %s  %4ds  %s' "$1" "$2" "$3" "${4:-}")"); [ "$2" = passed ] || failed=1; }

# run_ginkgo NAME PROCS live|quiet SUITE...: one Ginkgo run of the suites'
# specs on PROCS parallel processes, its output in ginkgo-NAME.log (and on
# stdout if live); each suite's summary line and the run's wall time go to
# result-NAME.txt, which collect adds to the summary.
run_ginkgo() {
  local name=$1 procs=$2 live=$3 filter= g s rc=0
  shift 3
  for g in "$@"; do filter+="${filter:+ || }$g"; done
  filter="($filter)${specs:+ && ($specs)}"
  echo "==> e2e $name suites: $* (E2E_SPECS=$E2E_SPECS: $filter), $procs processes"
  rm -f "$out/summary-$name.txt" "$out/result-$name.txt"
  s=$(date +%s)
  (cd "$root/e2e" && E2E_ENGINES="$engines" E2E_REPORT_DIR="$out" E2E_SUMMARY="$out/summary-$name.txt" E2E_SUITES="$*" \
    go tool ginkgo --procs="$procs" --label-filter="$filter" ${E2E_FOCUS:+--focus="$E2E_FOCUS"} --timeout=75m --no-color -v \
    --output-dir="$out" --json-report="report-$name.json" ./node/node.test) 2>&1 |
    if [ "$live" = live ]; then tee "$out/ginkgo-$name.log"; else cat >"$out/ginkgo-$name.log"; fi || rc=$?
  {
    if [ -f "$out/summary-$name.txt" ]; then
      cat "$out/summary-$name.txt"
      printf '%-14s %4ds wall for the %s suites, side by side\n' "" "$(( $(date +%s) - s ))" "$name"
    else
      printf '%-14s FAILED %4ds  (no summary: Ginkgo stopped before its report)\n' "$*" "$(( $(date +%s) - s ))"
    fi
    [ "$rc" -eq 0 ] || echo "ginkgo $name FAILED (exit $rc)"
  } >"$out/result-$name.txt"
}

# collect NAME: the run's summary lines; a run that left none failed.
collect() {
  local l
  if [ ! -f "$out/result-$1.txt" ]; then
    line "$1 run" FAILED 0 "(no result: the run ended before it wrote one)"
    return 0
  fi
  while IFS= read -r l; do
    summary+=("$l")
    if [[ $l == *FAILED* ]]; then failed=1; fi
  done <"$out/result-$1.txt"
}

# The host suites and the cluster suites run each kind on processes of
# its own: the host suites on E2E_PROCS slots, the rehearsals (an
# instance per process) on E2E_REHEARSALS. The cluster run starts once the
# host engines are up (E2E_CLUSTER_BESIDE=1) or once the host suites are
# done (0), its output kept in ginkgo-cluster.log and printed when it
# ends. The nodes suite follows the host suites, beside the rehearsals.
# One test binary for both runs, compiled here: the Ginkgo CLI compiles a
# suite it is given as a package into the package's directory and removes
# it when its run ends, so two runs given ./node would delete each other's
# binary (seen: "fork/exec .../node.test: no such file or directory"). A
# precompiled suite is run in its directory, as a compiled one is, and left.
(cd "$root/e2e" && go tool ginkgo build ./node) || { echo "e2e/run.sh: compiling e2e/node failed" >&2; exit 1; }

# What the selected specs run, built before them (and what the nodes suite
# starts: two nodes switching 1.7.5 <-> patched 1.9.11 with 1.9.11's
# kube-proxy). The nodes suite then checks the flags of every kubelet and
# control plane built here (NODES_E2E_TARGETS=built), or of every one with
# E2E_SPECS=all.
ginkgo_suites=("${host_suites[@]}" "${cluster_suites[@]}")
also=()
((nodes == 0)) || also=(--also kubelet:1.7.5,kubelet:1.9.11,control-plane:1.9.11)
if [ ${#ginkgo_suites[@]} -gt 0 ] || ((nodes)); then
  s=$(date +%s)
  report=()
  if [ ${#ginkgo_suites[@]} -gt 0 ]; then
    filter=
    for g in "${ginkgo_suites[@]}"; do filter+="${filter:+ || }$g"; done
    (cd "$root/e2e" && go tool ginkgo --dry-run --no-color --label-filter="($filter)${specs:+ && ($specs)}" ${E2E_FOCUS:+--focus="$E2E_FOCUS"} \
      --output-dir="$out" --json-report=dry-run.json ./node/node.test >"$out/dry-run.log" 2>&1) ||
      { cat "$out/dry-run.log" >&2; echo "e2e/run.sh: the dry run failed" >&2; exit 1; }
    report=(--report "$out/dry-run.json")
    # A suite none of whose specs is selected (a release's shard names a
    # few) is left out, rather than reported as a suite that ran nothing.
    keep=$("${toolchain[@]}" e2e-targets "${report[@]}" --suites "$(IFS=,; echo "${ginkgo_suites[*]}")")
    for kind in host_suites cluster_suites; do
      declare -n list=$kind
      kept=()
      for g in "${list[@]}"; do
        if grep -qx "$g" <<<"$keep"; then kept+=("$g"); else echo "    suite $g: no spec selected (E2E_SPECS=$E2E_SPECS)"; fi
      done
      list=("${kept[@]}")
      unset -n list
    done
    if [ ${#host_suites[@]} -eq 0 ] && [ ${#cluster_suites[@]} -eq 0 ] && ((nodes == 0 && conformance == 0)); then
      echo "e2e/run.sh: no spec of the suites ${ginkgo_suites[*]} is selected (E2E_SPECS=$E2E_SPECS${E2E_FOCUS:+, E2E_FOCUS=$E2E_FOCUS})" >&2
      exit 1
    fi
  fi
  echo "==> e2e targets: the kubelets and control planes the specs are labelled with (and the nodes suite's when it runs); with a control plane, the node image's root filesystem"
  "${toolchain[@]}" e2e-targets "${report[@]}" "${also[@]}" >"$out/targets.txt" || { echo "e2e/run.sh: building the e2e's targets failed" >&2; exit 1; }
  echo "    $(tr '\n' ' ' <"$out/targets.txt")($(( $(date +%s) - s ))s)"
fi
cluster_pid=
start_cluster() {
  [ ${#cluster_suites[@]} -gt 0 ] || return 0
  run_ginkgo cluster "$E2E_REHEARSALS" quiet "${cluster_suites[@]}" &
  cluster_pid=$!
  echo "    (the cluster run's output: $out/ginkgo-cluster.log, printed when it ends)"
}
wait_cluster() {
  [ -n "$cluster_pid" ] || return 0
  wait "$cluster_pid" || true
  cluster_pid=
  echo "==> e2e cluster run's output"
  cat "$out/ginkgo-cluster.log"
  collect cluster
}

if [ ${#host_suites[@]} -gt 0 ]; then
  echo "==> e2e engines: $E2E_PROCS, one per Ginkgo process ($engines/<n>)"
  s=$(date +%s)
  mkdir -p "$engines"
  pids=()
  for ((n = 1; n <= E2E_PROCS; n++)); do engine "$n" up & pids+=($!); done
  for ((n = 1; n <= E2E_PROCS; n++)); do
    wait "${pids[n - 1]}" || { cat "$engines/$n.up.log" >&2; echo "e2e/run.sh: engine $n did not come up" >&2; exit 1; }
  done
  echo "    up in $(( $(date +%s) - s ))s"
  ((E2E_CLUSTER_BESIDE == 0)) || start_cluster
  run_ginkgo host "$E2E_PROCS" live "${host_suites[@]}"
  collect host
  engines_down
fi
[ -n "$cluster_pid" ] || start_cluster

if ((nodes)); then
  echo "==> e2e suite nodes (beside the rehearsals; log $out/nodes.log)"
  s=$(date +%s) rc=0
  targets=built
  [ "$E2E_SPECS" != all ] || targets=all
  (cd "$root/scripts" && NODES_E2E_TARGETS=$targets go test -tags nodes_e2e ./internal/cluster/nodes -count=1 -v -timeout 30m) >"$out/nodes.log" 2>&1 || rc=$?
  # go test's: at least one test passed, none skipped.
  if [ "$rc" -eq 0 ] && grep -q '^--- PASS: ' "$out/nodes.log" && ! grep -q '^ *--- SKIP: ' "$out/nodes.log"; then v=passed; else v=FAILED; fi
  line nodes "$v" "$(( $(date +%s) - s ))" "(log $out/nodes.log)"
fi
wait_cluster

if ((conformance)); then
  echo "==> e2e suite conformance (alone, on _output/engine)"
  s=$(date +%s) rc=0
  # make conformance's engine (_output/engine) stays up between its runs for
  # its images; one this run starts, it stops (a shard leaves nothing running).
  conformance_engine_running || conformance_engine=ours
  # The [Conformance] specs of test/e2e_node (not test/e2e/common's).
  focus='\[k8s\.io\] (Container Runtime Conformance Test|Container Lifecycle Hook|MirrorPod|Kubelet) .*\[Conformance\]'
  "${toolchain[@]}" conformance-suite --release 1.9.11 >"$out/conformance-suite.log" 2>&1 &&
  "${toolchain[@]}" kubelet --release 1.9.11 --variant patched >>"$out/conformance-suite.log" 2>&1 &&
  "${toolchain[@]}" kubelet --release 1.9.11 --variant vanilla >>"$out/conformance-suite.log" 2>&1 &&
  "$root/tools/engine-up.sh" && (cd "$root/e2e" && go build -o "$root/_output/bin/conformance" ./cmd/conformance &&
    "$root/_output/bin/conformance" --compare --suite 1.9.11 --focus "$focus") 2>&1 | tee "$out/conformance.log" || rc=$?
  conformance_engine_down || rc=1
  if [ "$rc" -eq 0 ] && grep -q 'Ran [1-9][0-9]* of' "$out/conformance.log"; then v=passed; else v=FAILED; fi
  line conformance "$v" "$(( $(date +%s) - s ))"
fi

# Stop what this run started, then check: a process or mount still under
# _output is one a spec or suite left behind.
trap - EXIT
cleanup
# (No pipe: a tee writing under _output would be a process there.)
mc=0 check=$("${toolchain[@]}" machine check "$out/machine.json" 2>&1) || mc=$?
printf '%s\n' "$check" | tee -a "$out/machine.log"
((mc == 0)) || { failed=1; summary+=("machine check FAILED: a kernel setting or module changed, or something was left running or mounted under _output (see above)"); }
echo "==> e2e summary after $(( $(date +%s) - start ))s (reports and kubelet logs under _output/e2e/)"
printf '  %s\n' "${summary[@]}"
exit $failed
