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
# (testbed.sh down), also after Ctrl-C, and exits with COMMAND's status: up's when the bed did not
# start, down's when tearing it down failed, 128+N after signal N.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() { echo "usage: $0 [--karmada] DIR [VAR=VALUE...] CLUSTER... -- COMMAND [ARG...]" >&2; exit 2; }

up="$here/testbed.sh"
if [ "${1:-}" = --karmada ]; then up="$here/karmada.sh"; shift; fi
[ $# -ge 1 ] || usage
dir=$1; shift
# One run per bed: a second run of the same target on this machine (another clone's make test, CI
# beside a developer) waits here instead of tearing the bed down under the first. The lock is this
# shell's fd 9, held until the bed is down; the bed's daemons and the command get it closed.
if command -v flock >/dev/null 2>&1; then
  mkdir -p "$(dirname "$dir")"
  exec 9>"$dir.lock"
  flock -n 9 || { echo "with-bed: another run is using $dir; waiting for it to end" >&2; flock 9; }
fi
# Ctrl-C, or a signal to the run's process group, still ends with the bed down: the command gets
# the signal too, bash runs the trap once it has ended, and down follows. The bed's daemons run
# in sessions of their own, out of the signal's reach.
signalled=
trap 'signalled=130' INT
trap 'signalled=143' TERM
trap 'signalled=129' HUP
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
env TESTBED_DIR="$dir" "${upenv[@]}" bash "$up" up "${clusters[@]}" 9>&- || status=$?
if [ $status -eq 0 ] && [ -z "$signalled" ] && [ -n "$realnode" ]; then
  vars=$(TESTBED_DIR="$dir" bash "$here/node.sh" env 9>&-) || status=$?
  # Exported: TOOLBOX_IMAGE, DNS_SERVER, and NODE_NAME and APISERVER_NAME per node.
  [ $status -ne 0 ] || { set -a; eval "$vars"; set +a; }
fi
if [ $status -eq 0 ] && [ -z "$signalled" ]; then
  TESTBED_DIR="$dir" "$@" 9>&- || status=$?
fi
[ -z "$signalled" ] || echo "with-bed: interrupted; tearing $dir down" >&2
TESTBED_DIR="$dir" bash "$here/testbed.sh" down 9>&- || exit
exit "${signalled:-$status}"
