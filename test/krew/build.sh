#!/usr/bin/env bash
# Builds krew (as kubectl-krew) and validate-krew-manifest from sigs.k8s.io/krew, through the Go
# module proxy, into a cache outside the repo, and prints that directory. Reuses what is there.
#
# `go install sigs.k8s.io/krew/cmd/krew@VERSION` does not work: it looks the module's version list
# up (for deprecation notices), which the proxy refuses for this module. A throwaway module that
# requires krew and builds its commands needs no such lookup.
set -euo pipefail

KREW_VERSION=${KREW_VERSION:-v0.5.0}
CACHE=${KUBECTL_MCS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-mcs}
BIN="$CACHE/bin/krew-$KREW_VERSION"
export GOFLAGS=-buildvcs=false CGO_ENABLED=0

# Two builds into one cache at once: the second waits for the first's lock (test/testbed/lock.sh),
# then finds the binaries; temporary files are named for the process.
mkdir -p "$BIN"
# shellcheck source=../testbed/lock.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../testbed/lock.sh"
trap 'rm -f "$BIN"/*.tmp.$$; cache_unlock' EXIT
cache_lock "$CACHE/.krew-build.lock" krew-build
if [ -x "$BIN/kubectl-krew" ] && [ -x "$BIN/validate-krew-manifest" ]; then
  echo "$BIN"
  exit 0
fi
echo "krew-build: building krew and validate-krew-manifest $KREW_VERSION into $BIN" >&2
mod="$CACHE/src/krew-$KREW_VERSION"
mkdir -p "$mod"
cd "$mod"
if [ ! -f go.sum ]; then
  rm -f go.mod
  go mod init kubectl-mcs.local/krew >/dev/null 2>&1
  go mod edit -require "sigs.k8s.io/krew@$KREW_VERSION"
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "sigs.k8s.io/krew/cmd/krew"
	_ "sigs.k8s.io/krew/cmd/validate-krew-manifest"
)
GO
  go mod tidy >&2
fi
# Unstamped, krew counts as a development build and never checks online for a newer release.
for cmd in krew validate-krew-manifest; do
  out=$cmd; [ "$cmd" = krew ] && out=kubectl-krew
  go build -trimpath -ldflags=-s -o "$BIN/$out.tmp.$$" "sigs.k8s.io/krew/cmd/$cmd"
  mv "$BIN/$out.tmp.$$" "$BIN/$out"
done
echo "$BIN"
