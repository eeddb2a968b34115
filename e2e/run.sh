#!/usr/bin/env bash
# Runs the node e2e suites one by one (each is a Ginkgo label), so each
# suite's time is printed and each gets its own JUnit report. The suites
# run against the e2e's own Docker Engine (tools/engine-up.sh), never the
# machine's: E2E_DOCKER_SOCKET, default _output/engine/docker.sock.
#
#   e2e/run.sh [suite...]     default: upgrade inspect-hang orphan conformance rehearsal
#
# rehearsal-1.8 (the rehearsals 1.7.5 -> 1.8.15 and 1.8.15 -> 1.9.11, about
# 25 minutes) is not a default: `make test-all` runs it.
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
[ ${#suites[@]} -gt 0 ] || suites=(upgrade inspect-hang orphan conformance rehearsal)
# The [Conformance] specs of test/e2e_node (not test/e2e/common's).
conformance_focus='\[k8s\.io\] (Container Runtime Conformance Test|Container Lifecycle Hook|MirrorPod|Kubelet) .*\[Conformance\]'

summary=() failed=0
for s in "${suites[@]}"; do
  echo "==> e2e suite $s"
  start=$(date +%s)
  rc=0
  "$root/_output/bin/toolchain" --root "$root" machine save "$out/machine-$s.json"
  if [ "$s" = conformance ]; then
    (cd "$root/e2e" && go build -o "$root/_output/bin/conformance" ./cmd/conformance &&
      "$root/_output/bin/conformance" --compare --suite 1.9.11 --focus "$conformance_focus") 2>&1 | tee "$out/$s.log" || rc=$?
  else
    (cd "$root/e2e" && go test ./node -count=1 -timeout 30m -v \
        -ginkgo.label-filter="$s" -ginkgo.v \
        -ginkgo.junit-report="$out/junit-$s.xml") 2>&1 | tee "$out/$s.log" || rc=$?
  fi
  "$root/_output/bin/toolchain" --root "$root" machine check "$out/machine-$s.json" 2>&1 | tee -a "$out/$s.log" || rc=1
  secs=$(( $(date +%s) - start ))
  if [ "$rc" -eq 0 ] && grep -q 'Ran [1-9][0-9]* of' "$out/$s.log"; then
    summary+=("$(printf '%-14s passed  %4ds' "$s" "$secs")")
  else
    # A suite that ran no spec is a failure too, not a pass.
    summary+=("$(printf '%-14s FAILED  %4ds' "$s" "$secs")"); failed=1
  fi
done
echo "==> e2e summary (reports and kubelet logs under _output/e2e/)"
printf '  %s\n' "${summary[@]}"
exit $failed
