#!/usr/bin/env bash
# make bench-scale: runs the benchmark (go run ./bench) once per entry of BENCH_SCALE_RUNS, each on
# a fresh test bed of its own (TESTBED_DIR), keeps each run's figures in bench/out/scale/, then
# renders the curve of every results file there into BENCHMARKS.md.
#
# An entry is SERVICES:CLUSTERS:QPS[:BURST[:WORKERS[:ENDPOINTS[:MODE]]]]; QPS "default" runs sync
# with its default limit (50/100), BURST defaults to twice QPS, WORKERS (sync's --workers, and the
# write floor's requests in flight per cluster) to sync's default, 16, ENDPOINTS (per slice) to 2,
# MODE (bench -mode) to host: one sync --watch for the clusterset; per-member: one sync --watch
# --local=memberK per member (member1's measured, writes summed over all). The services are
# exported from 2 of the clusters.
#
# make bench-clusters runs it too, with BENCH_SCALE_OUT (where the results go: bench/out/clusters),
# BENCH_SCALE_RENDER=clusters (the bench-clusters section and its plot instead of the curve),
# TESTBED_LIGHT=1 (light members: bench -light), BENCH_SCALE_STATUS=0 (no status -A phase),
# BENCH_SCALE_GROW_BED=1 (the bed kept from one run to the next: the members a run adds started,
# those beyond its size deleted, each run from fresh namespaces) and
# BENCH_SCALE_ARGS (more bench flags).
set -euo pipefail

: "${TESTBED_DIR:?}" "${BINARY:?}"
RUNS=${BENCH_SCALE_RUNS:-1000:5:500:1000:16 1000:5:default::16 3000:5:500:1000:16 10000:5:500:1000:16}
BUSY_RATE=${BENCH_SCALE_BUSY_RATE:-100}
# The floors' share of the converge writes. Default: all of them up to 1,000 services, where a
# quarter replays in 6-30 s and one apiserver hiccup moves the floor by a fifth; a quarter above.
FLOOR_FRACTION=${BENCH_SCALE_FLOOR_FRACTION:-}
# 1: replay the converge writes a second time, watched as sync's converge was (for the explanation).
WATCHED_REPLAY=$([ "${BENCH_SCALE_WATCHED_REPLAY:-1}" = 1 ] && echo true || echo false)
LIGHT=$([ "${TESTBED_LIGHT:-}" = 1 ] && echo true || echo false)
read -r -a EXTRA <<<"${BENCH_SCALE_ARGS:-}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$(dirname "$here")"
repo=$(dirname "$here")
out="$repo/${BENCH_SCALE_OUT:-bench/out/scale}"
mkdir -p "$out/profiles"
export TESTBED_DIR
trap 'bash "$repo/test/testbed/testbed.sh" down' EXIT

go build -o "$out/bench.$$" ./bench
for run in $RUNS; do
  IFS=: read -r services clusters qps burst workers endpoints mode <<<"$run"
  workers=${workers:-16} endpoints=${endpoints:-2} mode=${mode:-host}
  members=()
  for ((i = 1; i <= clusters; i++)); do members+=("member$i"); done
  limit=()
  name="$services-c$clusters-qps$qps"
  name+="-w$workers"
  [ "$endpoints" = 2 ] || name+="-e$endpoints"
  [ "$mode" = host ] || name+="-$mode"
  # One file per binary too, so that runs of two commits stand side by side in the curve.
  commit=$("$BINARY" version -o json | sed -n 's/.*"commit": *"\([^"]*\)".*/\1/p')
  [ -z "$commit" ] || name+="-$commit"
  if [ "$qps" != default ]; then limit=(-kube-api-qps "$qps" -kube-api-burst "${burst:-$((2 * qps))}"); fi
  fraction=${FLOOR_FRACTION:-$([ "$services" -le 1000 ] && echo 1 || echo 0.25)}
  echo "bench-scale: $services services ($endpoints endpoints per slice), $clusters clusters, QPS $qps, $workers workers, $mode mode, floors on $fraction of the writes; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  if [ "${BENCH_SCALE_GROW_BED:-}" = 1 ]; then
    extra=()
    for f in "$TESTBED_DIR"/member*.kubeconfig; do
      n=$(basename "$f" .kubeconfig)
      [ -f "$f" ] && [ "${n#member}" -gt "$clusters" ] 2>/dev/null && extra+=("$n")
    done
    [ ${#extra[@]} -eq 0 ] || bash "$repo/test/testbed/testbed.sh" down "${extra[@]}" >/dev/null 2>&1 || true
  else
    bash "$repo/test/testbed/testbed.sh" down >/dev/null 2>&1 || true
  fi
  echo "bench-scale: memory available before the bed: $(free -m | awk '/^Mem:/ {print $7}') MiB" >&2
  bash "$repo/test/testbed/testbed.sh" up "${members[@]}"
  "$out/bench.$$" -scale -kubeconfig "$TESTBED_DIR/kubeconfig" -binary "$BINARY" \
    -contexts "$(IFS=,; echo "${members[*]}")" -services "$services" -status-services "${BENCH_SCALE_STATUS:-$services}" \
    -busy-rate "$BUSY_RATE" -floor-fraction "$fraction" -workers "$workers" "${limit[@]}" -watched-replay="$WATCHED_REPLAY" \
    -light="$LIGHT" -endpoints "$endpoints" -mode "$mode" "${EXTRA[@]}" \
    -profile-dir "$out/profiles" -out "$out/$name.json" -markdown ""
  cp bench/out/sync.log "$out/profiles/$name-sync.log" 2>/dev/null || true
done
bash "$repo/test/testbed/testbed.sh" down
rm -f "$out/bench.$$"
if [ "${BENCH_SCALE_RENDER:-}" = clusters ]; then
  go run ./bench -clusters-curve "$(ls "$out"/*.json | paste -sd, -)" -markdown "$repo/BENCHMARKS.md"
else
  go run ./bench -curve "$(ls "$out"/*.json | paste -sd, -)" -markdown "$repo/BENCHMARKS.md"
fi
