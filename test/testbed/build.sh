#!/usr/bin/env bash
# Builds the pinned control-plane binaries the test bed runs, from the Go module proxy, into a
# cache outside the repo. Reuses what is already there. Safe to run concurrently on one cache: a
# lock on the cache serialises builds (a second one waits, then finds the binaries built), and
# every temporary file is named for its process. Two phases, run side by side (each alone leaves a
# core idle while it downloads modules or links): kwok, etcd and CoreDNS, one small module after
# the other; the Kubernetes commands, from one module in one go build. Each says where it is first
# (steps.sh).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.5}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
CACHE=${KUBECTL_MCS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-mcs}
BIN="$CACHE/bin/k8s-$K8S_VERSION"
export GOFLAGS=-buildvcs=false CGO_ENABLED=0

mkdir -p "$BIN"
log() { echo "testbed-build: $*" >&2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lock.sh
. "$here/lock.sh"
# shellcheck source=steps.sh
. "$here/steps.sh"
TESTBED_BUILD_STEPS=${TESTBED_BUILD_STEPS:-tools kubernetes}
# A build that fails or is interrupted leaves no temporary file and no lock behind.
trap 'rm -rf "$BIN"/*.tmp.$$ "$CACHE"/bin/etcd-*.tmp.$$ "$CACHE"/bin/coredns-*/coredns.tmp.$$; cache_unlock' EXIT
[ "${TESTBED_BUILD_PLAN:-}" = 1 ] || cache_lock "$CACHE/.testbed-build.lock" testbed-build

# Kubernetes components: k8s.io/kubernetes replaces its staging modules with local paths, which a
# dependent module cannot follow, so every one of them is replaced by its published tag.
# TESTBED_NODE_BINARIES=1 (node.sh build) adds the real nodes' kubelet and kube-proxy.
build_k8s() {
  local want=(kube-apiserver kube-controller-manager kube-scheduler) missing=()
  [ "${TESTBED_NODE_BINARIES:-}" = 1 ] && want+=(kubelet kube-proxy)
  for b in "${want[@]}"; do [ -x "$BIN/$b" ] || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] && return
  local staging_version="v0${K8S_VERSION#v1}"
  local mod="$CACHE/src/k8s-$K8S_VERSION"
  mkdir -p "$mod"
  if [ ! -f "$mod/go.sum" ]; then
    (cd "$mod"
     rm -f go.mod
     go mod init kubectl-mcs.local/k8sbins >/dev/null 2>&1
     local gomod
     gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
     [ -f "$gomod" ] || { log "cannot fetch k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
     grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$gomod" | awk '{print $1}' | sort -u |
       while read -r m; do go mod edit -replace "$m=$m@$staging_version"; done
     go mod edit -require "k8s.io/kubernetes@$K8S_VERSION")
  fi
  # Every command ever wanted stays in tools.go, so that one tidy module serves them all.
  local tools="$mod/tools.go" b
  for b in "${want[@]}"; do
    grep -q "cmd/$b\"" "$tools" 2>/dev/null && continue
    { echo '//go:build tools'; echo; echo 'package tools'; echo; echo 'import ('
      for c in "${want[@]}"; do echo "	_ \"k8s.io/kubernetes/cmd/$c\""; done
      echo ')'; } > "$tools"
    (cd "$mod" && { go mod tidy -e >/dev/null 2>&1 || true; } && go mod download)
    break
  done
  # The version stamp: without it kubelet registers its node as v0.0.0-master.
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local ldflags="-s -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  # One go build for them all: it links them side by side, and each package is compiled once.
  local out="$BIN/build.tmp.$$" pkgs=()
  for b in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  mkdir -p "$out"
  (cd "$mod" && go build -tags tools -ldflags="$ldflags" -o "$out/" "${pkgs[@]}")
  for b in "${missing[@]}"; do mv "$out/$b" "$BIN/$b"; done
  rmdir "$out"
}

# The Kubernetes phase's minutes from nothing (figures in DEVELOPERS.md): the apiserver,
# controller-manager and scheduler, and kubelet and kube-proxy with them.
k8s_minutes() { if [ "$1" -gt 3 ]; then echo 13; else echo 11; fi; }

build_etcd() {
  local out="$CACHE/bin/etcd-$ETCD_VERSION"
  [ -x "$out" ] && return
  log "building etcd $ETCD_VERSION"
  local mod="$CACHE/src/etcd-$ETCD_VERSION"
  mkdir -p "$mod"
  (cd "$mod"
   [ -f go.mod ] || go mod init kubectl-mcs.local/etcd >/dev/null 2>&1
   cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
   go mod edit -require "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
   go mod tidy >/dev/null
   go build -ldflags=-s -o "$out.tmp.$$" . && mv "$out.tmp.$$" "$out")
}

build_kwok() {
  local dir="$CACHE/bin/kwok-$KWOK_VERSION"
  [ -x "$dir/kwokctl" ] && [ -x "$dir/kwok" ] && return
  log "building kwok $KWOK_VERSION"
  mkdir -p "$dir"
  GOBIN="$dir" go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION"
}

# CoreDNS for the clusterset DNS tests: stock plugins only (its multicluster plugin is not
# published as a module), built like etcd from a throwaway module.
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
build_coredns() {
  local out="$CACHE/bin/coredns-$COREDNS_VERSION/coredns"
  [ -x "$out" ] && return
  log "building coredns $COREDNS_VERSION"
  local mod="$CACHE/src/coredns-$COREDNS_VERSION"
  mkdir -p "$mod" "$(dirname "$out")"
  (cd "$mod"
   [ -f go.mod ] || go mod init kubectl-mcs.local/coredns >/dev/null 2>&1
   cat > main.go <<'GO'
package main

import (
	_ "github.com/coredns/coredns/core/plugin"
	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
GO
   go mod edit -require "github.com/coredns/coredns@$COREDNS_VERSION"
   go mod tidy >/dev/null
   go build -ldflags=-s -o "$out.tmp.$$" . && mv "$out.tmp.$$" "$out")
}

# join A B...: "A, B, ..."
join() { local s; s=$(printf '%s, ' "$@"); echo "${s%, }"; }

# What is missing, phase by phase; each phase says so in order, then both run side by side and
# always to their end, so that a failure leaves no build behind.
tools=()
[ -x "$CACHE/bin/kwok-$KWOK_VERSION/kwokctl" ] && [ -x "$CACHE/bin/kwok-$KWOK_VERSION/kwok" ] || tools+=("kwok $KWOK_VERSION")
[ -x "$CACHE/bin/etcd-$ETCD_VERSION" ] || tools+=("etcd $ETCD_VERSION")
[ -x "$CACHE/bin/coredns-$COREDNS_VERSION/coredns" ] || tools+=("coredns $COREDNS_VERSION")
k8s=()
for b in kube-apiserver kube-controller-manager kube-scheduler; do [ -x "$BIN/$b" ] || k8s+=("$b"); done
if [ "${TESTBED_NODE_BINARIES:-}" = 1 ]; then
  for b in kubelet kube-proxy; do [ -x "$BIN/$b" ] || k8s+=("$b"); done
fi
lanes=()
if [ ${#tools[@]} -gt 0 ] && step tools "building $(join "${tools[@]}")" "13 min"; then
  { build_kwok; build_etcd; build_coredns; } & lanes+=($!)
fi
if [ ${#k8s[@]} -gt 0 ] && step kubernetes "building $(join "${k8s[@]}") $K8S_VERSION" "$(k8s_minutes ${#k8s[@]}) min"; then
  build_k8s & lanes+=($!)
fi
status=0
for pid in "${lanes[@]}"; do wait "$pid" || status=1; done
[ "$status" = 0 ] || { log "failed (above)"; exit 1; }
echo "$CACHE/bin"
