#!/usr/bin/env bash
# Local clusterset of real control planes (kube-apiserver, etcd, kube-controller-manager,
# kube-scheduler, kwok) started as plain processes with kwokctl's binary runtime.
#
#   testbed.sh up [NAME...]     start clusters (default: member1 member2 member3)
#   testbed.sh down [NAME...]   stop and delete them (default: every test-bed cluster)
#   testbed.sh env              print the variables that point kubectl at the test bed
#   testbed.sh merge            rewrite $TESTBED_KUBECONFIG from the clusters' kubeconfigs
#
# A real Karmada control plane (context "karmada") is started by karmada.sh, or by `up ... karmada`
# with TESTBED_KARMADA=real (the other clusters named are joined to it); `stop`, `start` and
# `down` of karmada then act on all of its processes.
#
# TESTBED_DUALSTACK names (space or comma separated) the clusters to start dual-stack (IPv4 and
# IPv6 service range, pod CIDRs, pod IPs and EndpointSlices), e.g. TESTBED_DUALSTACK=member4.
#
# TESTBED_REALNODE names the clusters that get a real node (node.sh: containerd, kubelet,
# kube-proxy and CoreDNS in a network namespace, pod CIDRs routed between them) instead of kwok's.
#
# TESTBED_LIGHT=1 starts light clusters: kube-apiserver and etcd only (no scheduler,
# controller-manager, kwok or Node), for the benchmark that writes its EndpointSlices itself
# (make bench-clusters). Nothing deletes a namespace's content there: bench -light does it.
# They start TESTBED_LIGHT_JOBS (default 8) at a time.
#
# Contexts in $TESTBED_KUBECONFIG are named after the clusters. Each cluster gets one fake Node
# (kwok) with its own pod CIDR, so Deployments get Running pods with distinct IPs and the real
# EndpointSlice controller fills EndpointSlices.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${KUBECTL_MCS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-mcs}
TESTBED_DIR=${TESTBED_DIR:-$CACHE/testbed}
TESTBED_KUBECONFIG=${TESTBED_KUBECONFIG:-$TESTBED_DIR/kubeconfig}
export KWOK_WORKDIR="$TESTBED_DIR/kwok"

# shellcheck source=bins.sh
. "$here/bins.sh"
# shellcheck source=ports.sh
. "$here/ports.sh"

# The cluster's index picks its pod CIDR, so pod IPs differ across clusters as in a real clusterset.
index_of() { local d=${1//[^0-9]/}; echo $((10#${d:-0})); }

is_dualstack() {
  local n
  ds=${TESTBED_DUALSTACK:-}; for n in ${ds//,/ }; do [ "$n" = "$1" ] && return 0; done
  return 1
}

is_light() { [ "${TESTBED_LIGHT:-}" = 1 ]; }

# A cluster is light when kwokctl runs no controller-manager for it.
light_as_asked() {
  local has=0
  grep -q 'name: kube-controller-manager$' "$KWOK_WORKDIR/clusters/$1/kwok.yaml" 2>/dev/null || has=1
  if is_light; then [ $has = 1 ]; else [ $has = 0 ]; fi
}

# up_light starts light clusters side by side, TESTBED_LIGHT_JOBS at a time, once it has found
# which run already, one after another (kwokctl's list of clusters can fail while another is being
# created, which would take a running cluster for gone).
up_light() {
  local n failed=0 running=0 todo=()
  for n in "$@"; do up_one "$n" check || todo+=("$n"); done
  for n in "${todo[@]}"; do
    up_one "$n" &
    running=$((running + 1))
    if [ $running -ge "${TESTBED_LIGHT_JOBS:-8}" ]; then wait -n || failed=1; running=$((running - 1)); fi
  done
  while [ $running -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
  return $failed
}

is_realnode() {
  local n
  rn=${TESTBED_REALNODE:-}; for n in ${rn//,/ }; do [ "$n" = "$1" ] && return 0; done
  return 1
}

# up_one NAME [check]: with check, only says whether NAME runs as asked (and keeps it).
up_one() {
  local name=$1 idx cfg range cidrs node=()
  idx=$(( $(index_of "$name") % 200 + 10 ))
  cfg="$TESTBED_DIR/$name.kubeconfig"
  # The service range is widened from kwokctl's /24 (~250 cluster IPs; the benchmark needs
  # thousands). A dual-stack cluster adds an IPv6 service range (apiserver and controller-manager;
  # the controller-manager needs no --cluster-cidr, as it allocates no node CIDRs) and an IPv6 pod
  # CIDR on its Node, from which kwok gives every pod a second IP; the EndpointSlice controller
  # then writes an IPv6 slice next to the IPv4 one.
  range=10.96.0.0/16 cidrs="10.$idx.0.0/16"
  if is_dualstack "$name"; then
    range=10.96.0.0/16,fd00:10:96::/112 cidrs="10.$idx.0.0/16,fd00:10:$idx::/64"
  fi
  # A real node replaces kwok; the apiserver reaches its kubelet (exec, logs) by the node's IP.
  # Pods reach the apiserver at the host's address on the bed's segment (node.sh address): it is
  # advertised (the kubernetes Service leads there) and, with the Service's first IP, named in the
  # serving certificate kwokctl signs with the cluster's CA, which pods get as their ca.crt.
  local want="--service-cluster-ip-range=$range" conf="$TESTBED_DIR/$name.kwokctl.yaml" options=
  local kcm=(--extra-args kube-controller-manager=service-cluster-ip-range=$range)
  if is_light; then
    node=(--disable kube-scheduler --disable kube-controller-manager --disable kwok-controller) kcm=()
  fi
  if is_realnode "$name"; then
    local hostip sans; hostip=$(bash "$here/node.sh" address) sans="$hostip, 10.96.0.1"
    is_dualstack "$name" && sans="$sans, fd00:10:96::1"
    want="--advertise-address=$hostip"
    node=(--disable kwok-controller --extra-args kube-apiserver=kubelet-preferred-address-types=InternalIP
      --extra-args "kube-apiserver=advertise-address=$hostip")
    options="kubeApiserverCertSANs: [$sans], "
  fi
  # A running cluster is kept only when it has the stack asked for (a Node's pod CIDRs cannot
  # change) and, with a real node, the address pods use.
  if "$KWOKCTL" get clusters 2>/dev/null | grep -qx "$name" && kubectl --kubeconfig "$cfg" get --raw /readyz >/dev/null 2>&1 &&
    grep -q -- "--service-cluster-ip-range=$range\$" "$KWOK_WORKDIR/clusters/$name/kwok.yaml" 2>/dev/null &&
    grep -q -- "$want\$" "$KWOK_WORKDIR/clusters/$name/kwok.yaml" 2>/dev/null &&
    light_as_asked "$name"; then
    echo "testbed: $name already running" >&2
  elif [ "${2:-}" = check ]; then
    return 1
  else
    # Leftovers of a cluster whose processes are gone (a killed session, a reboot) are cleared
    # first: kwokctl merges into an existing kubeconfig, so a stale one would clash.
    "$KWOKCTL" delete cluster --name "$name" >/dev/null 2>&1 || true
    rm -f "$cfg"
    ports_config "$name" "$conf" "$options" || return 1
    "$KWOKCTL" create cluster --config "$conf" --name "$name" --runtime binary --quiet-pull \
      --kube-apiserver-binary "$APISERVER" --kube-controller-manager-binary "$CONTROLLER_MANAGER" \
      --kube-scheduler-binary "$SCHEDULER" --kwok-controller-binary "$KWOK" --etcd-binary "$ETCD" \
      --extra-args kube-apiserver=service-cluster-ip-range=$range \
      "${kcm[@]}" "${node[@]}" \
      --kubeconfig "$cfg" --wait 60s >"$TESTBED_DIR/$name.log" 2>&1 ||
      { rm -f "$conf"; cat "$TESTBED_DIR/$name.log" >&2; echo "testbed: $name failed to start" >&2; return 1; }
    rm -f "$conf"
    echo "testbed: $name started$(is_dualstack "$name" && echo ' (dual-stack)')" >&2
    kubectl --kubeconfig "$cfg" config rename-context "kwok-$name" "$name" >/dev/null
  fi
  if is_realnode "$name" || is_light; then return; fi
  kubectl --kubeconfig "$cfg" --context "$name" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $name-node
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/hostname: $name-node
    type: kwok
spec:
  podCIDR: ${cidrs%%,*}
  podCIDRs: [$cidrs]
YAML
}

merge_kubeconfig() {
  local files=()
  for f in "$TESTBED_DIR"/*.kubeconfig; do [ -f "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] || { rm -f "$TESTBED_KUBECONFIG"; return; }
  KUBECONFIG=$(IFS=:; echo "${files[*]}") kubectl config view --flatten > "$TESTBED_KUBECONFIG.tmp"
  mv "$TESTBED_KUBECONFIG.tmp" "$TESTBED_KUBECONFIG"
}

# A stopped cluster's ports stay claimed (ports.sh), but a program other than a test bed may still
# take one; starting it again would then fail to bind, or (etcd's port taken, the apiserver's
# free) point our apiserver at someone else's etcd. Refuse.
check_ports() {
  local n=$1 p pid
  command -v ss >/dev/null || return 0
  for p in $(sed -n 's/^ *port: \([0-9][0-9]*\)$/\1/p' "$KWOK_WORKDIR/clusters/$n/kwok.yaml" 2>/dev/null); do
    pid=$(ss -Hltnp "sport = :$p" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true)
    [ -n "$pid" ] || continue
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$KWOK_WORKDIR/clusters/$n/" && continue
    echo "testbed: $n: port $p was taken by another process (pid $pid) while $n was stopped; recreate it: testbed.sh down $n; testbed.sh up $n" >&2
    exit 1
  done
}

cmd=${1:-up}; shift || true
mkdir -p "$TESTBED_DIR"
case "$cmd" in
  up)
    [ $# -gt 0 ] || set -- member1 member2 member3
    bins
    if [ "${TESTBED_KARMADA:-}" = real ] && printf '%s\n' "$@" | grep -qx karmada; then
      # A real Karmada control plane (karmada.sh) instead of the plain apiserver, with the
      # other clusters named joined to it.
      others=(); for n in "$@"; do [ "$n" = karmada ] || others+=("$n"); done
      for n in "${others[@]}"; do up_one "$n"; done
      merge_kubeconfig
      bash "$here/karmada.sh" up "${others[@]}"
    else
      if is_light; then up_light "$@"; else for n in "$@"; do up_one "$n"; done; fi
      merge_kubeconfig
    fi
    real=(); for n in "$@"; do is_realnode "$n" && real+=("$n"); done
    [ ${#real[@]} -eq 0 ] || bash "$here/node.sh" up "${real[@]}"
    echo "testbed: up: $* (KUBECONFIG=$TESTBED_KUBECONFIG)" >&2
    ;;
  down)
    bins >/dev/null 2>&1 || KWOKCTL=$(ls -d "$CACHE"/bin/kwok-*/ 2>/dev/null | tail -n 1)kwokctl
    if [ $# -eq 0 ]; then
      for f in "$TESTBED_DIR"/*.kubeconfig; do [ -f "$f" ] && set -- "$@" "$(basename "$f" .kubeconfig)"; done
    fi
    # The real Karmada control plane has processes and a network namespace besides its cluster.
    if [ -d "$TESTBED_DIR/karmada-cp" ] && printf '%s\n' "$@" | grep -qx karmada; then
      bash "$here/karmada.sh" down || true
    fi
    # Real nodes first, while their apiservers still answer.
    for n in "$@"; do [ -d "$TESTBED_DIR/nodes/$n" ] && bash "$here/node.sh" down "$n"; done
    for n in "$@"; do
      "$KWOKCTL" delete cluster --name "$n" >/dev/null 2>&1 || true
      rm -f "$TESTBED_DIR/$n.kubeconfig"
      release_ports "$n"
    done
    merge_kubeconfig
    echo "testbed: down: $*" >&2
    ;;
  stop|start)
    # Stop/start one cluster's processes without deleting it (used to simulate an outage).
    # kwokctl returns before the apiserver is up (or down): wait for it, and retry a start whose
    # ports were still held by the stopped processes.
    bins >/dev/null
    for n in "$@"; do
      cfg="$TESTBED_DIR/$n.kubeconfig"
      # The real Karmada control plane has processes of its own besides its cluster.
      if [ "$n" = karmada ] && [ -d "$TESTBED_DIR/karmada-cp" ]; then
        bash "$here/karmada.sh" "$cmd"; continue
      fi
      # Without this, stopping a cluster of another test bed would look like success.
      [ -f "$cfg" ] || { echo "testbed: no cluster $n in $TESTBED_DIR" >&2; exit 1; }
      if [ "$cmd" = stop ]; then
        # kwok's node lease lasts 200 s, and a restarted kwok that finds it held by its former
        # self tries once to create it and gives up: the node's pods are never run again. Gone
        # now, it is created afresh at start.
        kubectl --kubeconfig "$cfg" --request-timeout=5s -n kube-node-lease delete lease --all >/dev/null 2>&1 || true
      fi
      [ "$cmd" = start ] && check_ports "$n"
      for attempt in 1 2 3; do
        "$KWOKCTL" "$cmd" cluster --name "$n" >"$TESTBED_DIR/$n.log" 2>&1 || true
        ok=
        for _ in $(seq 1 60); do
          if kubectl --kubeconfig "$cfg" --request-timeout=1s get --raw /readyz >/dev/null 2>&1; then
            [ "$cmd" = start ] && { ok=1; break; }
          else
            [ "$cmd" = stop ] && { ok=1; break; }
          fi
          sleep 0.5
        done
        [ -n "$ok" ] && break
        [ "$cmd" = start ] && "$KWOKCTL" stop cluster --name "$n" >/dev/null 2>&1 || true
      done
      [ -n "$ok" ] || { cat "$TESTBED_DIR/$n.log" >&2; echo "testbed: $cmd $n failed" >&2; exit 1; }
      if [ "$cmd" = stop ]; then echo "testbed: $n stopped" >&2; else echo "testbed: $n started" >&2; fi
    done
    ;;
  env)
    echo "export KUBECONFIG=$TESTBED_KUBECONFIG"
    ;;
  merge) merge_kubeconfig ;;
  *) echo "usage: $0 up|down|stop|start|env|merge [NAME...]" >&2; exit 2 ;;
esac
