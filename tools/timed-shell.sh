#!/bin/bash
# Make's SHELL for CI (.ci/run passes SHELL=tools/timed-shell.sh): runs
# each recipe line as bash would and prints how long it took, so a CI log
# gives every step's time without the Makefile saying so line by line.
start=$(date +%s.%N)
rc=0
/bin/bash "$@" || rc=$?
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.0f", e-s}')
# Only steps worth reading: a second or more, or a failure.
if ((secs >= 1 || rc != 0)); then
	cmd=${*: -1}
	cmd=${cmd//$'\n'/ }
	printf -- '--- step %5ss%s  %s\n' "$secs" "$( ((rc)) && echo " (exit $rc)")" "${cmd:0:120}"
fi
exit "$rc"
