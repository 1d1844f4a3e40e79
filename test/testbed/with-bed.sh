#!/usr/bin/env bash
# One test bed around one command: make test-e2e, test-traffic, test-karmada, soak, bench,
# bench-first-packet and bench-karmada each run through it.
#
#   with-bed.sh [--karmada] DIR [VAR=VALUE...] CLUSTER... -- COMMAND [ARG...]
#
# Starts CLUSTER... in the test bed DIR (TESTBED_DIR=DIR testbed.sh up, with each VAR=VALUE in
# its environment only: TESTBED_DUALSTACK, TESTBED_REALNODE, KUBECTL_MCS_BINARY, ...; with
# --karmada, karmada.sh up: a real Karmada control plane joined by the clusters, KARMADA_SOURCES
# among the VAR=VALUE). When the bed started, runs COMMAND with TESTBED_DIR=DIR and, when the bed
# has real nodes (TESTBED_REALNODE not empty), what node.sh env prints (TOOLBOX_IMAGE,
# DNS_SERVER, APISERVER_NAME per node) in its environment. Then always tears the bed down
# (testbed.sh down) and exits with COMMAND's status: up's when the bed did not start, down's when
# tearing it down failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() { echo "usage: $0 [--karmada] DIR [VAR=VALUE...] CLUSTER... -- COMMAND [ARG...]" >&2; exit 2; }

all=("$@")
up="$here/testbed.sh"
if [ "${1:-}" = --karmada ]; then up="$here/karmada.sh"; shift; fi
[ $# -ge 1 ] || usage
dir=$1; shift
# One run per bed: a second run of the same target on this machine (another clone's make test, CI
# beside a developer) waits here instead of tearing the bed down under the first. flock -o: the
# bed's daemons must not inherit the lock.
if [ -z "${WITH_BED_LOCKED:-}" ] && command -v flock >/dev/null 2>&1; then
  mkdir -p "$(dirname "$dir")"
  flock -n "$dir.lock" true || echo "with-bed: another run is using $dir; waiting for it to end" >&2
  exec env WITH_BED_LOCKED=1 flock -o "$dir.lock" bash "$0" "${all[@]}"
fi
upenv=() clusters=() realnode=${TESTBED_REALNODE:-}
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
    *=*) upenv+=("$1"); [[ $1 == TESTBED_REALNODE=* ]] && realnode=${1#TESTBED_REALNODE=} ;;
    *) clusters+=("$1") ;;
  esac
  shift
done
[ $# -ge 2 ] || usage
shift # --

status=0
env TESTBED_DIR="$dir" "${upenv[@]}" bash "$up" up "${clusters[@]}" || status=$?
if [ $status -eq 0 ] && [ -n "$realnode" ]; then
  vars=$(TESTBED_DIR="$dir" bash "$here/node.sh" env) || status=$?
  # Exported: TOOLBOX_IMAGE, DNS_SERVER, and NODE_NAME and APISERVER_NAME per node.
  [ $status -ne 0 ] || { set -a; eval "$vars"; set +a; }
fi
if [ $status -eq 0 ]; then
  TESTBED_DIR="$dir" "$@" || status=$?
fi
TESTBED_DIR="$dir" bash "$here/testbed.sh" down || exit
exit $status
