#!/usr/bin/env bash
# Runs the node e2e suites one by one (each is a Ginkgo label), so each
# suite's time is printed and each gets its own JUnit report. The suites
# run against the e2e's own Docker Engine (tools/engine-up.sh), never the
# machine's: E2E_DOCKER_SOCKET, default _output/engine/docker.sock.
#
#   e2e/run.sh [suite...]     default: upgrade inspect-hang orphan nodes rehearsal
#
# What does not fit CI's hour is `make test-all`'s: the conformance suite,
# rehearsal-1.8 (the rehearsals 1.7.5 -> 1.8.15 and 1.8.15 -> 1.9.11, about
# 25 minutes), and the specs labelled "extended" (the same fixes on more
# releases: the walk through 1.8.15, 1.7.5's and 1.8.15's inspect hangs).
# E2E_SPECS picks them within a suite: ci (default, without "extended"),
# extended (only those) or all.
#
# The nodes suite is scripts/internal/nodes' end to end (go test -tags
# nodes_e2e): the rehearsal's node containers on an engine of its own
# (_output/nodes-e2e/engine, bridge kubelet-nt0, 198.18.203.1/24), which it
# brings up and takes down; its tests remove only what each made. It passes
# only if some test passed and none failed or skipped.
#
# The rehearsal suite runs `toolchain rehearsal` (its own engine, nodes and
# control plane) and removes all of it at the end. The conformance suite is
# upstream's: the 1.9.11 e2e_node.test's own [Conformance] specs (those of
# test/e2e_node) judge both 1.9.11 variants (`make conformance-compare`
# runs all 132).
#
# Each suite must leave the machine's kernel settings as it found them:
# they are recorded before it and checked after it (toolchain machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/_output/e2e"
mkdir -p "$out"
export E2E_DOCKER_SOCKET="${E2E_DOCKER_SOCKET:-$root/_output/engine/docker.sock}"
echo "==> e2e engine unix://$E2E_DOCKER_SOCKET"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(upgrade inspect-hang orphan nodes rehearsal)
case "${E2E_SPECS:=ci}" in
  ci) specs='!extended' ;;
  extended) specs='extended' ;;
  all) specs='' ;;
  *) echo "e2e/run.sh: E2E_SPECS=$E2E_SPECS: want ci, extended or all" >&2; exit 2 ;;
esac
# The [Conformance] specs of test/e2e_node (not test/e2e/common's).
conformance_focus='\[k8s\.io\] (Container Runtime Conformance Test|Container Lifecycle Hook|MirrorPod|Kubelet) .*\[Conformance\]'

summary=() failed=0
for s in "${suites[@]}"; do
  echo "==> e2e suite $s (E2E_SPECS=$E2E_SPECS)"
  start=$(date +%s)
  rc=0
  "$root/_output/bin/toolchain" --root "$root" machine save "$out/machine-$s.json"
  ran='Ran [1-9][0-9]* of' # Ginkgo's: at least one spec ran
  if [ "$s" = nodes ]; then
    (cd "$root/scripts" && go test -tags nodes_e2e ./internal/nodes -count=1 -v -timeout 30m) 2>&1 | tee "$out/$s.log" || rc=$?
    ran='^--- PASS: ' # go test's: at least one test passed (and, below, none skipped)
    if grep -q '^ *--- SKIP: ' "$out/$s.log"; then rc=1; fi
  elif [ "$s" = conformance ]; then
    (cd "$root/e2e" && go build -o "$root/_output/bin/conformance" ./cmd/conformance &&
      "$root/_output/bin/conformance" --compare --suite 1.9.11 --focus "$conformance_focus") 2>&1 | tee "$out/$s.log" || rc=$?
  else
    (cd "$root/e2e" && go test ./node -count=1 -timeout 30m -v \
        -ginkgo.label-filter="$s${specs:+ && $specs}" -ginkgo.v \
        -ginkgo.junit-report="$out/junit-$s.xml") 2>&1 | tee "$out/$s.log" || rc=$?
  fi
  "$root/_output/bin/toolchain" --root "$root" machine check "$out/machine-$s.json" 2>&1 | tee -a "$out/$s.log" || rc=1
  secs=$(( $(date +%s) - start ))
  if [ "$rc" -eq 0 ] && grep -q "$ran" "$out/$s.log"; then
    summary+=("$(printf '%-14s passed  %4ds' "$s" "$secs")")
  else
    # A suite that ran no spec is a failure too, not a pass.
    summary+=("$(printf '%-14s FAILED  %4ds' "$s" "$secs")"); failed=1
  fi
done
echo "==> e2e summary (reports and kubelet logs under _output/e2e/)"
printf '  %s\n' "${summary[@]}"
exit $failed
