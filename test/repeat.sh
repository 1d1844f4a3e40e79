#!/usr/bin/env bash
# repeat.sh RUNS MAKE ARGS...: runs MAKE ARGS (the real-node suites, RUNS times each on their
# beds) with half the cores kept busy beside them, then prints how many of its runs every test
# passed. The busy loops are this script's children, stopped by their PIDs however it ends.
set -euo pipefail
runs=$1; shift
log=$(mktemp -t kubectl-mcs-repeat.XXXXXX)
hogs=()
stop_hogs() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; wait "${hogs[@]}" 2>/dev/null || true; }
trap stop_hogs EXIT
n=$(( $(nproc) / 2 )); [ "$n" -ge 1 ] || n=1
for _ in $(seq "$n"); do
  ( trap 'exit 0' TERM; while :; do :; done ) &
  hogs+=($!)
done
echo "test-repeat: $runs run(s) each, $n of $(nproc) cores kept busy (pids ${hogs[*]}); log: $log"
status=0
"$@" 2>&1 | tee "$log" || status=$?
stop_hogs
trap - EXIT
echo
echo "test-repeat: passes of $runs run(s) (a test that skips counts as neither)"
# go test -v lines, and the conformance suite's summary line of each run.
{ grep -Eo -- '--- (PASS|FAIL): [A-Za-z0-9_/]+' "$log" | awk '{print $3, $2}'
  grep -Eo 'conformance: [0-9]+ passed, [0-9]+ failed' "$log" |
    awk '{print "conformance", ($4 == 0 ? "PASS:" : "FAIL:")}'
} | awk '{ runs[$1]++; if ($2 == "PASS:") pass[$1]++ } END { for (t in runs) printf "%3d/%-3d %s\n", pass[t], runs[t], t }' | sort -k2
exit $status
