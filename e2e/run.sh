#!/usr/bin/env bash
# Runs the node e2e suites, side by side, and prints each suite's time.
#
#   e2e/run.sh [suite...]     default: upgrade inspect-hang orphan nodes rehearsal
#
# The Ginkgo suites are labels of e2e/node. The host suites (tls, upgrade,
# inspect-hang, orphan: kubelets on this machine) run first, in one Ginkgo
# run whose specs are spread over E2E_PROCS parallel processes (default:
# one more than the cores, at most one per 2 GiB of available memory, at
# most 9).
# A process runs one spec at a time, on a node that shares nothing a
# kubelet touches with another process's (framework.Slot): its own Docker
# Engine, started here (_output/e2e/engines/<n>: sockets, data, bridge
# kubelet-e2e<n> on 198.18.<210+n>.1/24), its own kubelet and pod host
# ports, and per node its cgroup root, CRI socket, dockershim and kubelet
# roots, pod log dirs and fault proxy.
#
# The cluster suites (rehearsal, rehearsal-1.8) run next, on
# E2E_REHEARSALS processes (default one per 4 cores, at least one), each
# with its own rehearsal instance <n> (_output/rehearsal-<n>, engine,
# bridge kubelet-rh<n>, subnet and control plane ports). Beside them runs
# the nodes suite, scripts/internal/nodes' end to end (go test -tags
# nodes_e2e: the rehearsal's node containers on an engine of its own,
# _output/nodes-e2e/engine, bridge kubelet-nt0, 198.18.203.1/24, which it
# brings up and takes down); it passes only if some test passed and none
# failed or skipped. The conformance suite (upstream's e2e_node.test
# [Conformance] specs of 1.9.11 judging both variants, on _output/engine)
# runs last, alone: it judges specs by how often they pass. Each Ginkgo
# suite gets its JUnit report (junit-<suite>.xml) and a summary line.
#
# E2E_SPECS picks specs within the Ginkgo suites: ci (default, without
# "extended"), extended (only those) or all; E2E_FOCUS, when set, only the
# specs whose text matches it (Ginkgo's --focus). docs/e2e.md says what CI
# runs and what `make test-all` adds.
#
# The machine's kernel settings and loaded modules are recorded once
# before all suites and checked once after them (toolchain machine): no
# suite's change can hide in, or fail, another's check. Every suite's
# kubelet writes its kernel settings into shadows of its node's own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/_output/e2e"
toolchain=("$root/_output/bin/toolchain" --root "$root")
mkdir -p "$out"
start=$(date +%s)

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(upgrade inspect-hang orphan nodes rehearsal)
case "${E2E_SPECS:=ci}" in
  ci) specs='!extended' ;;
  extended) specs='extended' ;;
  all) specs='' ;;
  *) echo "e2e/run.sh: E2E_SPECS=$E2E_SPECS: want ci, extended or all" >&2; exit 2 ;;
esac
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
[[ $E2E_PROCS =~ ^[1-9]$ ]] || { echo "e2e/run.sh: E2E_PROCS=$E2E_PROCS: want 1..9" >&2; exit 2; }
[[ $E2E_REHEARSALS =~ ^[1-9]$ ]] || { echo "e2e/run.sh: E2E_REHEARSALS=$E2E_REHEARSALS: want 1..9" >&2; exit 2; }
engines="$out/engines"

# engine N up|down: the slot's engine.
engine() {
  ENGINE_DIR="$engines/$1" ENGINE_BRIDGE="kubelet-e2e$1" ENGINE_BRIDGE_CIDR="198.18.$((210 + $1)).1/24" \
    "$root/tools/engine-$2.sh" >"$engines/$1.$2.log" 2>&1
}
engines_down() {
  local n
  for ((n = 1; n <= E2E_PROCS; n++)); do [ ! -e "$engines/$n" ] || engine "$n" down & done
  wait
}
cleanup() {
  local n
  for ((n = 1; n <= E2E_REHEARSALS; n++)); do
    # A rehearsal an interrupted spec left up on the slot's instance.
    if [ -e "$root/_output/rehearsal-$n/state.json" ] || [ -e "$root/_output/rehearsal-$n/engine/dockerd.pid" ]; then
      "${toolchain[@]}" rehearsal down --instance "$n" >>"$out/rehearsal-down.log" 2>&1 || echo "e2e/run.sh: rehearsal down --instance $n failed (see $out/rehearsal-down.log)" >&2
    fi
  done
  engines_down
}
trap cleanup EXIT

"${toolchain[@]}" machine save "$out/machine.json"
summary=() failed=0
line() { summary+=("$(printf '%-14s %s  %4ds  %s' "$1" "$2" "$3" "${4:-}")"); [ "$2" = passed ] || failed=1; }

# run_ginkgo NAME PROCS SUITE...: one Ginkgo run of the suites' specs on PROCS
# parallel processes; each suite's summary line is added.
run_ginkgo() {
  local name=$1 procs=$2 filter= g s rc=0 secs
  shift 2
  for g in "$@"; do filter+="${filter:+ || }$g"; done
  filter="($filter)${specs:+ && $specs}"
  echo "==> e2e $name suites: $* (E2E_SPECS=$E2E_SPECS: $filter), $procs processes"
  rm -f "$out/summary.txt"
  s=$(date +%s)
  (cd "$root/e2e" && E2E_ENGINES="$engines" E2E_REPORT_DIR="$out" E2E_SUITES="$*" \
    go tool ginkgo --procs="$procs" --label-filter="$filter" ${E2E_FOCUS:+--focus="$E2E_FOCUS"} --timeout=75m --no-color -v \
    --output-dir="$out" --json-report="report-$name.json" ./node) 2>&1 | tee "$out/ginkgo-$name.log" || rc=$?
  secs=$(( $(date +%s) - s ))
  if [ -f "$out/summary.txt" ]; then
    while read -r g verdict rest; do
      summary+=("$(printf '%-14s %s' "$g" "$verdict") $rest")
      [ "$verdict" = passed ] || failed=1
    done <"$out/summary.txt"
    summary+=("$(printf '%-14s %4ds wall for the %s suites, side by side' "" "$secs" "$name")")
  else
    line "$*" FAILED "$secs" "(no summary: Ginkgo stopped before its report)"
  fi
  [ "$rc" -eq 0 ] || failed=1
}

# The host suites first, alone: their specs time kubelets against
# deadlines (the inspect hangs' 10 s + 10 s), and every kubelet's cAdvisor
# watches every cgroup of the machine, other nodes' too.
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
  run_ginkgo host "$E2E_PROCS" "${host_suites[@]}"
  engines_down
fi

# Then the clusters: the rehearsals (an instance per process) and, beside
# them, the nodes suite.
nodes_pid=
if ((nodes)); then
  echo "==> e2e suite nodes (beside the rehearsals; log $out/nodes.log)"
  (
    s=$(date +%s) rc=0
    (cd "$root/scripts" && go test -tags nodes_e2e ./internal/nodes -count=1 -v -timeout 30m) >"$out/nodes.log" 2>&1 || rc=$?
    # go test's: at least one test passed, none skipped.
    if [ "$rc" -eq 0 ] && grep -q '^--- PASS: ' "$out/nodes.log" && ! grep -q '^ *--- SKIP: ' "$out/nodes.log"; then v=passed; else v=FAILED; fi
    echo "$v $(( $(date +%s) - s ))" >"$out/nodes.result"
  ) &
  nodes_pid=$!
fi
[ ${#cluster_suites[@]} -eq 0 ] || run_ginkgo cluster "$E2E_REHEARSALS" "${cluster_suites[@]}"
if [ -n "$nodes_pid" ]; then
  wait "$nodes_pid" || true
  read -r v secs <"$out/nodes.result" || { v=FAILED secs=0; }
  line nodes "$v" "$secs" "(log $out/nodes.log)"
fi

if ((conformance)); then
  echo "==> e2e suite conformance (alone, on _output/engine)"
  s=$(date +%s) rc=0
  # The [Conformance] specs of test/e2e_node (not test/e2e/common's).
  focus='\[k8s\.io\] (Container Runtime Conformance Test|Container Lifecycle Hook|MirrorPod|Kubelet) .*\[Conformance\]'
  "$root/tools/engine-up.sh" && (cd "$root/e2e" && go build -o "$root/_output/bin/conformance" ./cmd/conformance &&
    "$root/_output/bin/conformance" --compare --suite 1.9.11 --focus "$focus") 2>&1 | tee "$out/conformance.log" || rc=$?
  if [ "$rc" -eq 0 ] && grep -q 'Ran [1-9][0-9]* of' "$out/conformance.log"; then v=passed; else v=FAILED; fi
  line conformance "$v" "$(( $(date +%s) - s ))"
fi

"${toolchain[@]}" machine check "$out/machine.json" 2>&1 | tee -a "$out/machine.log" || { failed=1; summary+=("machine check FAILED: the kernel settings or modules changed (see above)"); }
echo "==> e2e summary after $(( $(date +%s) - start ))s (reports and kubelet logs under _output/e2e/)"
printf '  %s\n' "${summary[@]}"
exit $failed
