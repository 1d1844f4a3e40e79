#!/usr/bin/env bash
# The images the KEP-1645 conformance suite's pods name, made from the toolbox's Debian root (see
# build.sh: socat, nslookup, nc with -4/-6, sh, grep and awk are all there), with no registry:
#
#   conformance.sh NAME:TAG...
#
# writes one docker-save archive, $CACHE/images/conformance-DIGEST.tar, holding one image per
# NAME:TAG, all on the toolbox's one layer (containerd stores it once). An image whose name holds
# "socat" gets socat as its entrypoint, as the suite's server image has; the others none, so that
# a pod's args run as its command, as with the suite's request image. Prints
# "CONFORMANCE_ARCHIVE=PATH"; reused while the toolbox and this script are unchanged.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KUBECTL_MCS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-mcs}
OUT="$CACHE/images"
[ $# -ge 1 ] || { echo "usage: $0 NAME:TAG..." >&2; exit 2; }

eval "$(bash "$here/build.sh" | tr ' ' '\n' | grep -E '^TOOLBOX_ARCHIVE=')"
digest=$( { echo "$TOOLBOX_ARCHIVE $*"; cat "$0"; } | sha256sum | cut -c1-12)
archive="$OUT/conformance-$digest.tar"
if [ -f "$archive" ]; then echo "CONFORMANCE_ARCHIVE=$archive"; exit 0; fi

work="$OUT/conformance.tmp.$$"
trap 'rm -rf "$work" "$archive.tmp.$$"' EXIT
mkdir -p "$work"
# The toolbox archive: manifest.json, its config, and one directory named after the layer's digest.
tar -C "$work" -xf "$TOOLBOX_ARCHIVE"
layer=$(sed -n 's/.*"Layers":\["\([^"]*\)"\].*/\1/p' "$work/manifest.json")
diff=${layer%/layer.tar}
rm -f "$work"/*.json

manifest=() configs=()
for ref in "$@"; do
  entry='"Cmd":["/bin/sh"]'
  [[ $ref == *socat* ]] && entry='"Entrypoint":["/usr/bin/socat"]'
  printf '{"architecture":"%s","os":"linux","config":{%s,"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$(go env GOARCH)" "$entry" "$diff" >"$work/config.json"
  cfg=$(sha256sum "$work/config.json" | cut -d' ' -f1)
  mv "$work/config.json" "$work/$cfg.json"
  configs+=("$cfg.json")
  manifest+=("$(printf '{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s"]}' "$cfg" "$ref" "$layer")")
done
(IFS=,; echo "[${manifest[*]}]") >"$work/manifest.json"
tar -C "$work" -cf "$archive.tmp.$$" manifest.json "${configs[@]}" "$diff"
mv "$archive.tmp.$$" "$archive"
echo "images: conformance images $* in $archive" >&2
echo "CONFORMANCE_ARCHIVE=$archive"
