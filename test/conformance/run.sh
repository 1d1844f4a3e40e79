#!/usr/bin/env bash
# make conformance: the official KEP-1645 conformance suite (kubernetes-sigs/mcs-api, conformance/)
# against kubectl-mcs on two test-bed clusters with real nodes.
#
#   run.sh build   build the suite from $MCS_API/conformance into the cache (reused while its
#                  sources are unchanged); print the binary's path
#   run.sh run     inside test/testbed/with-bed.sh (TESTBED_DIR, DNS_SERVER): load the images the
#                  suite's pods name into each node, init and init --dns, start sync --watch, run
#                  every spec with the report flags, write the report into $REPORT_DIR
#
# MCS_API (the mcs-api sources), BINARY (kubectl-mcs), SUITE (run.sh build's path), REPORT_DIR,
# IMPL_VERSION (the release tag or commit the report names), CONTEXTS (default member1,member2);
# MCS_API_COMMIT names the sources when they are not a git checkout. `run` exits non-zero unless
# every spec passed: a failed, pending or skipped spec fails it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KUBECTL_MCS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-mcs}
MCS_API=${MCS_API:?MCS_API must name the mcs-api sources}
CONTEXTS=${CONTEXTS:-member1,member2}
log() { echo "conformance: $*" >&2; }

# The suite is a module of its own whose API module is `replace`d onto its parent: the key is a
# digest of both modules' sources, so a changed copy is never hidden by a binary already built.
sources_digest() {
  (cd "$MCS_API" && find . -path ./.git -prune -o -type f \( -name '*.go' -o -name go.mod -o -name go.sum \
    -o -name '*.gohtml' \) -print | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)
}

# The commit the sources come from: git's when they are a checkout, else MCS_API_COMMIT.
sources_commit() {
  git -C "$MCS_API" rev-parse --short=7 HEAD 2>/dev/null || echo "${MCS_API_COMMIT:-unknown}"
}

build() {
  local bin
  bin="$CACHE/bin/mcs-conformance-$(sources_digest)/mcs-conformance.test"
  if [ ! -x "$bin" ]; then
    # shellcheck source=../testbed/lock.sh
    . "$here/../testbed/lock.sh"
    trap cache_unlock EXIT
    cache_lock "$CACHE/.conformance-build.lock" conformance
  fi
  if [ ! -x "$bin" ]; then
    local s=$SECONDS
    log "building the suite from $MCS_API/conformance into $(dirname "$bin")"
    mkdir -p "$(dirname "$bin")"
    (cd "$MCS_API/conformance" && GOWORK=off nice -n 10 go test -c -o "$bin.tmp" .)
    mv "$bin.tmp" "$bin"
    log "built the suite in $((SECONDS - s)) s"
  fi
  echo "$bin"
}

# images loads the images the suite's pods name (read from its sources) into every node's containerd.
images() {
  local names archive n
  names=$(grep -ho 'Image: *"[^"]*"' "$MCS_API"/conformance/*.go | sed 's/.*"\(.*\)"/\1/' | sort -u)
  # shellcheck disable=SC2086 # one argument per image
  archive=$(bash "$here/../images/conformance.sh" $names | sed -n 's/^CONFORMANCE_ARCHIVE=//p')
  for n in "$TESTBED_DIR"/nodes/*/; do
    ctr --address "$n/containerd.sock" -n k8s.io images import --no-unpack "$archive" >/dev/null
  done
  log "images $(echo $names) loaded into $(ls "$TESTBED_DIR/nodes" | tr '\n' ' ')"
}

# work and sync_pid are global: the EXIT trap reads them after run returns.
run() {
  local cfg="$TESTBED_DIR/kubeconfig" status=0 summary
  : "${BINARY:?}" "${SUITE:?}" "${REPORT_DIR:?}" "${DNS_SERVER:?run inside test/testbed/with-bed.sh with real nodes}"
  work=$(mktemp -d)
  images
  "$BINARY" --kubeconfig "$cfg" init --contexts "$CONTEXTS" >/dev/null
  "$BINARY" --kubeconfig "$cfg" init --contexts "$CONTEXTS" --dns --dns-server "$DNS_SERVER" >/dev/null
  # The controller, as the README runs it: one sync --watch for the clusterset.
  "$BINARY" --kubeconfig "$cfg" sync --watch --contexts "$CONTEXTS" >"$work/sync.log" 2>&1 &
  sync_pid=$!
  trap 'kill -TERM $sync_pid 2>/dev/null; wait $sync_pid 2>/dev/null; rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM

  log "running $SUITE against $CONTEXTS (about 10 minutes)"
  (cd "$work" && "$SUITE" -kubeconfig "$cfg" -contexts "$CONTEXTS" \
    -organization kubectl-mcs -project kubectl-mcs -version "${IMPL_VERSION:-unknown}" \
    -url https://github.com/kubectl-mcs/kubectl-mcs \
    -ginkgo.no-color -ginkgo.timeout 50m -test.timeout 50m) 2>&1 | tee "$work/suite.log" || status=$?

  summary=$(grep -Eo '[0-9]+ Passed \| [0-9]+ Failed \| [0-9]+ Pending \| [0-9]+ Skipped' "$work/suite.log" | tail -n 1 || true)
  if [ -z "$summary" ] || ! [[ $summary =~ ^[0-9]+\ Passed\ \|\ 0\ Failed\ \|\ 0\ Pending\ \|\ 0\ Skipped$ ]]; then
    [ $status -ne 0 ] || status=1
  fi
  if [ -f "$work/report.yaml" ]; then
    mkdir -p "$REPORT_DIR"
    cp "$work/report.html" "$work/report.yaml" "$REPORT_DIR/"
    write_run "${summary:-no summary}" >"$REPORT_DIR/run.md"
  fi
  if [ $status -ne 0 ]; then
    echo "--- sync --watch (last 60 lines)"; tail -n 60 "$work/sync.log"
    for n in "$TESTBED_DIR"/nodes/*/; do
      echo "--- dns-server of $(basename "$n") (last 20 lines)"; tail -n 20 "$n/logs/dns-server.log" 2>/dev/null || true
    done
  fi
  local passed failed skipped
  read -r passed failed skipped < <(echo "$summary" | awk -F' [|] ' '{print $1+0, $2+0, $4+0}')
  echo "conformance: $passed passed, $failed failed, $skipped skipped (report: $REPORT_DIR/report.html)"
  return $status
}

# write_run SUMMARY: what ran, against what, when: beside the suite's own report.
write_run() {
  local first=${CONTEXTS%%,*} k8s kubelet proxy_mode
  k8s=$(kubectl --kubeconfig "$TESTBED_DIR/kubeconfig" --context "$first" version -o json 2>/dev/null |
    sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | tail -n 1)
  kubelet=$(kubectl --kubeconfig "$TESTBED_DIR/kubeconfig" --context "$first" get nodes \
    -o jsonpath='{.items[0].status.nodeInfo.kubeletVersion} ({.items[0].status.nodeInfo.containerRuntimeVersion})')
  proxy_mode=$(sed -n 's/^mode: *//p' "$TESTBED_DIR/nodes/$first/kube-proxy.yaml" 2>/dev/null)
  cat <<EOF
# KEP-1645 conformance run

| | |
|---|---|
| result | \`${1//|/\\|}\` |
| date | $(date -u +%Y-%m-%d) |
| kubectl-mcs | ${IMPL_VERSION:-unknown} |
| suite | kubernetes-sigs/mcs-api \`conformance/\` at $(sources_commit) (sources digest $(sources_digest)) |
| Kubernetes | API servers ${k8s:-unknown}; nodes: kubelet ${kubelet:-unknown}, kube-proxy in ${proxy_mode:-unknown} mode |
| clusters | ${CONTEXTS//,/, }, one real node each (\`test/testbed/node.sh\`), \`kubectl mcs sync --watch\` and \`kubectl mcs dns-server\` |

The suite's own report: [report.html](report.html) ([report.yaml](report.yaml)). How to
reproduce it: [README.md](../README.md).
EOF
}

case ${1:-} in
  build) build ;;
  run) run ;;
  *) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
