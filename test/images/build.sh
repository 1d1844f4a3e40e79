#!/usr/bin/env bash
# Builds the real-node test bed's images, with no registry and no Docker, into
# $CACHE/images/NAME-TAG.tar (docker-save archives that `ctr images import` loads):
#
#   mcs-test/pause:TAG    the sandbox image: test/images/pause alone
#   mcs-test/toolbox:TAG  a Debian minbase root (debootstrap from the mirror apt already uses) with
#                         curl, dig, nc, socat, busybox and iproute2, and test/images/echo as its
#                         entrypoint
#
# TAG is a digest of what goes in, so a changed source is never hidden by an image already loaded.
# Prints "PAUSE_IMAGE=... TOOLBOX_IMAGE=..." lines (the archives beside them) for the test bed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KUBECTL_MCS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-mcs}
OUT="$CACHE/images"
SUITE=${IMAGES_SUITE:-bookworm}
PACKAGES=socat,dnsutils,netcat-openbsd,curl,busybox,iproute2,ca-certificates
mkdir -p "$OUT"
log() { echo "images: $*" >&2; }
# shellcheck source=../testbed/lock.sh
. "$here/../testbed/lock.sh"
# shellcheck source=../testbed/steps.sh
. "$here/../testbed/steps.sh"
TESTBED_BUILD_STEPS=${TESTBED_BUILD_STEPS:-images}
trap 'rm -rf "$OUT"/*.tmp.$$; cache_unlock' EXIT
[ "${TESTBED_BUILD_PLAN:-}" = 1 ] || cache_lock "$CACHE/.images-build.lock" images

tag=$(cat "$here/pause/main.go" "$here/echo/main.go" "$0" | { cat; echo "$SUITE $PACKAGES"; } | sha256sum | cut -c1-12)

# The mirror apt is configured with (deb822 or one-line sources), so that nothing names a host here.
mirror() {
  { grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
    grep -h '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
  } | awk '{print $2}' | { grep -v security || true; } | head -n 1
}

# pack NAME DIR ENTRYPOINT...: a one-layer docker-save archive of DIR.
pack() {
  local name=$1 dir=$2; shift 2
  local work="$OUT/$name.tmp.$$" ref="mcs-test/$name:$tag"
  mkdir -p "$work"
  tar --numeric-owner --sort=name --mtime=@0 -C "$dir" -cf "$work/layer.tar" .
  local diff cfg entry
  diff=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
  mkdir -p "$work/$diff" && mv "$work/layer.tar" "$work/$diff/layer.tar"
  entry=$(printf '"%s",' "$@"); entry="[${entry%,}]"
  printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":%s,"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$(go env GOARCH)" "$entry" "$diff" > "$work/config.json"
  cfg=$(sha256sum "$work/config.json" | cut -d' ' -f1)
  mv "$work/config.json" "$work/$cfg.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$cfg" "$ref" "$diff" > "$work/manifest.json"
  tar -C "$work" -cf "$OUT/$name-$tag.tar.tmp.$$" manifest.json "$cfg.json" "$diff"
  mv "$OUT/$name-$tag.tar.tmp.$$" "$OUT/$name-$tag.tar"
  rm -rf "$work"
}

gobuild() { (cd "$here/../.." && CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$2" "./test/images/$1"); }

# The phase says where it is once, before the first of its parts that has work to do.
base="$OUT/rootfs-$SUITE-$(echo "$PACKAGES" | sha256sum | cut -c1-8)"
if [ ! -f "$OUT/pause-$tag.tar" ] || [ ! -f "$OUT/toolbox-$tag.tar" ]; then
  if [ -f "$base/.complete" ]; then
    step images "building the test images mcs-test/pause and mcs-test/toolbox" "20 s" || exit 0
  else
    step images "building the test images mcs-test/pause and mcs-test/toolbox on a Debian $SUITE root (debootstrap)" "3 min" || exit 0
  fi
fi

if [ ! -f "$OUT/pause-$tag.tar" ]; then
  log "building mcs-test/pause:$tag"
  root="$OUT/pause-root.tmp.$$"; mkdir -p "$root"
  gobuild pause "$root/pause"
  pack pause "$root" /pause
fi

if [ ! -f "$OUT/toolbox-$tag.tar" ]; then
  # The Debian root is the slow part (about a minute): kept across echo changes.
  if [ ! -f "$base/.complete" ]; then
    command -v debootstrap >/dev/null || { log "debootstrap is missing (apt-get install debootstrap)"; exit 1; }
    m=$(mirror); [ -n "$m" ] || { log "no Debian mirror found in apt's sources"; exit 1; }
    log "debootstrap $SUITE (minbase + $PACKAGES)"
    rm -rf "$base" "$base.tmp"
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$base.tmp" "$m" >"$OUT/debootstrap.log" 2>&1 ||
      { tail -n 20 "$OUT/debootstrap.log" >&2; log "debootstrap failed (log: $OUT/debootstrap.log)"; exit 1; }
    rm -rf "$base.tmp"/usr/share/{doc,man,info,locale} "$base.tmp"/var/cache/apt/* "$base.tmp"/var/lib/apt/lists/*
    mv "$base.tmp" "$base" && touch "$base/.complete"
  fi
  log "building mcs-test/toolbox:$tag"
  root="$OUT/toolbox-root.tmp.$$"
  cp -a "$base" "$root" && rm -f "$root/.complete"
  gobuild echo "$root/usr/local/bin/mcs-echo"
  pack toolbox "$root" /usr/local/bin/mcs-echo
fi
echo "PAUSE_IMAGE=mcs-test/pause:$tag PAUSE_ARCHIVE=$OUT/pause-$tag.tar"
echo "TOOLBOX_IMAGE=mcs-test/toolbox:$tag TOOLBOX_ARCHIVE=$OUT/toolbox-$tag.tar"
