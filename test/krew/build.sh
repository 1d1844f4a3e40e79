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

if [ -x "$BIN/kubectl-krew" ] && [ -x "$BIN/validate-krew-manifest" ]; then
  echo "$BIN"
  exit 0
fi
echo "krew-build: building krew and validate-krew-manifest $KREW_VERSION into $BIN" >&2
mod="$CACHE/src/krew-$KREW_VERSION"
mkdir -p "$mod" "$BIN"
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
go build -trimpath -ldflags=-s -o "$BIN/kubectl-krew.tmp" sigs.k8s.io/krew/cmd/krew
go build -trimpath -ldflags=-s -o "$BIN/validate-krew-manifest.tmp" sigs.k8s.io/krew/cmd/validate-krew-manifest
mv "$BIN/kubectl-krew.tmp" "$BIN/kubectl-krew"
mv "$BIN/validate-krew-manifest.tmp" "$BIN/validate-krew-manifest"
echo "$BIN"
