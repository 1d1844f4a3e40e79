# Sourced by testbed.sh and karmada.sh (CACHE, TESTBED_DIR): the ports of a bed's kwokctl clusters.
# Left to pick, kwokctl takes the first ports it can listen on from 32767 down, so a cluster
# created while another bed's cluster on this machine was stopped took that cluster's ports, and
# the stopped one could not start again. Every cluster gets its six ports here instead, from a range
# kwokctl's picking does not reach, recorded for as long as the cluster exists, running or stopped:
# $PORTS/PORT names the file $TESTBED_DIR/NAME.ports that lists the cluster's ports. A record whose
# list is gone (a bed deleted without down) is taken again.
PORTS="$CACHE/.testbed-ports"

# claim_ports NAME: prints NAME's six ports, recorded; claims are serialized machine-wide.
claim_ports() {
  local mine="$TESTBED_DIR/$1.ports"
  mkdir -p "$PORTS"
  (
    command -v flock >/dev/null 2>&1 && { flock 8 || exit 1; }
    local bound p o got=()
    bound=" $(ss -Hltn 2>/dev/null | awk '{n = split($4, a, ":"); print a[n]}' | tr '\n' ' ') "
    for ((p = 28000; p < 32000 && ${#got[@]} < 6; p++)); do
      [[ $bound == *" $p "* ]] && continue
      if [ -f "$PORTS/$p" ]; then
        o=$(cat "$PORTS/$p")
        [ "$o" != "$mine" ] && grep -qx "$p" "$o" 2>/dev/null && continue
      fi
      got+=("$p")
    done
    [ ${#got[@]} -eq 6 ] || { echo "testbed: $1: no six free ports in 28000-31999" >&2; exit 1; }
    printf '%s\n' "${got[@]}" >"$mine"
    for p in "${got[@]}"; do echo "$mine" >"$PORTS/$p"; done
    echo "${got[*]}"
  ) 8>"$CACHE/.testbed-ports.lock"
}

# ports_config NAME FILE [OPTIONS]: claims NAME's ports and writes FILE, a kwokctl configuration
# that gives them (and OPTIONS, "key: value, ...").
ports_config() {
  local claimed p; claimed=$(claim_ports "$1") || return 1
  read -r -a p <<<"$claimed"
  printf '%s\n' 'apiVersion: config.kwok.x-k8s.io/v1alpha1' 'kind: KwokctlConfiguration' \
    "options: {${3:-}kubeApiserverPort: ${p[0]}, etcdPort: ${p[1]}, etcdPeerPort: ${p[2]}," \
    "  kwokControllerPort: ${p[3]}, kubeControllerManagerPort: ${p[4]}, kubeSchedulerPort: ${p[5]}}" >"$2"
}

release_ports() {
  local mine="$TESTBED_DIR/$1.ports" p
  [ -f "$mine" ] || return 0
  for p in $(cat "$mine"); do
    [ "$(cat "$PORTS/$p" 2>/dev/null)" = "$mine" ] && rm -f "$PORTS/$p"
  done
  rm -f "$mine"
}
