#!/usr/bin/env bash
# A real Karmada control plane, as processes, next to the kwok test-bed members.
#
#   karmada.sh build              build Karmada's binaries from KARMADA_SOURCES into the cache
#   karmada.sh up [MEMBER...]     start the control plane (context "karmada") and join the members
#                                 (default: member1 member2 member3, started with testbed.sh if absent)
#   karmada.sh stop|start         stop / start the control plane's processes (members untouched)
#   karmada.sh down               stop everything started here, remove the network namespace
#   karmada.sh stats              memory (RSS) of the control plane's processes, start time
#   karmada.sh smoke              a PropagationPolicy places a Deployment in member1: wait for its
#                                 pods there (and none in member2), then clean up
#
# KARMADA_SOURCES: Karmada's sources (default ../shared/karmada beside the repository). When they
# are absent, every verb prints one line and exits 0 (nothing Karmada-related can run).
#
# What runs (state in $TESTBED_DIR/karmada-cp: pids/, logs/, pki/, ports, stats):
# - karmada-apiserver: the kube-apiserver + etcd of a kwokctl cluster named "karmada", with the
#   request-header flags aggregation needs and a kube-controller-manager limited to Karmada's
#   controllers (no kube-scheduler, no kwok: nothing runs pods on the control plane).
#   Karmada's CRDs (charts/karmada/_crds/bases) and namespace karmada-system.
# - karmada-webhook on 127.0.0.1 with a serving certificate made here (openssl), and Karmada's
#   webhook configurations (artifacts/deploy/webhook-configuration.yaml) pointing at it by url.
# - karmada-aggregated-apiserver (cluster.karmada.io) in a network namespace joined to the host by
#   a veth pair: an APIService cannot route to a loopback address. It shares the apiserver's etcd
#   (reached through the host side of the veth), as in a real Karmada. A selectorless Service and
#   its Endpoints/EndpointSlice point the APIService at it.
# - karmada-controller-manager (--feature-gates=MultiClusterService=true) and karmada-scheduler.
# - members joined in Push mode with karmadactl join.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
CACHE=${KUBECTL_MCS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-mcs}
TESTBED_DIR=${TESTBED_DIR:-$CACHE/testbed}
export TESTBED_DIR
export KWOK_WORKDIR="$TESTBED_DIR/kwok"
KARMADA_SOURCES=${KARMADA_SOURCES:-$repo/../shared/karmada}
# Network of the aggregated apiserver's namespace: host side .1, inside .2 of a /30.
KARMADA_NET=${KARMADA_NET:-10.254.254}
NAME=karmada
CP="$TESTBED_DIR/karmada-cp"
CFG="$TESTBED_DIR/$NAME.kubeconfig"
# Network namespace and veth names: unique per test bed (15 characters at most for a link).
tag=$(printf '%s' "$TESTBED_DIR" | cksum | cut -c1-6)
NETNS=kmcs-$tag VETH_HOST=kmh$tag VETH_NS=kmn$tag

log() { echo "karmada: $*" >&2; }

sources_present() {
  [ -f "$KARMADA_SOURCES/go.mod" ] && [ -d "$KARMADA_SOURCES/cmd/controller-manager" ]
}
# Without the sources nothing can be built or started: one line, and success.
need_sources() {
  if ! sources_present; then
    log "skipped: no Karmada sources at $KARMADA_SOURCES (set KARMADA_SOURCES)"
    exit 0
  fi
  KARMADA_SOURCES=$(cd "$KARMADA_SOURCES" && pwd)
}

# The cache directory is named after the sources' version: git describe when they are a checkout,
# else KARMADA_VERSION, else the commit the pruned copy was taken from.
karmada_version() {
  [ -n "${KARMADA_VERSION:-}" ] && { echo "$KARMADA_VERSION"; return; }
  git -C "$KARMADA_SOURCES" describe --tags --always 2>/dev/null && return
  echo f8fdd02df376
}
KBIN="$CACHE/bin/karmada-$(karmada_version)"
COMPONENTS="controller-manager scheduler webhook aggregated-apiserver karmadactl"

build() {
  mkdir -p "$KBIN"
  local c s
  for c in $COMPONENTS; do
    [ -x "$KBIN/karmada-$c" ] && continue
    s=$(date +%s)
    log "building karmada-$c into $KBIN (cold: minutes)"
    (cd "$KARMADA_SOURCES" && GOWORK=off nice -n 19 go build -mod=vendor -o "$KBIN/karmada-$c.tmp" "./cmd/$c")
    mv "$KBIN/karmada-$c.tmp" "$KBIN/karmada-$c"
    log "built karmada-$c in $(( $(date +%s) - s )) s"
  done
}

# shellcheck source=bins.sh
. "$here/bins.sh"
# shellcheck source=ports.sh
. "$here/ports.sh"

kc() { kubectl --kubeconfig "$CFG" --context "$NAME" "$@"; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# port NAME: a port kept in $CP/ports, so that a restart serves where the configurations point.
port() {
  local p
  p=$(sed -n "s/^$1=//p" "$CP/ports" 2>/dev/null)
  [ -n "$p" ] || { p=$(free_port); echo "$1=$p" >>"$CP/ports"; }
  echo "$p"
}

alive() { local p; p=$(cat "$CP/pids/$1.pid" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# run NAME CMD...: start a component in the background (its own session), its PID in pids/NAME.pid.
run() {
  local n=$1; shift
  if alive "$n"; then return; fi
  setsid "$@" >"$CP/logs/$n.log" 2>&1 </dev/null &
  echo $! >"$CP/pids/$n.pid"
  log "$n started (pid $!)"
}

wait_for() { # DESCRIPTION SECONDS CMD...
  local what=$1 secs=$2 i; shift 2
  for ((i = 0; i < secs * 2; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  log "timed out after ${secs}s waiting for $what"; return 1
}

apiserver() {
  local pki="$KWOK_WORKDIR/clusters/$NAME/pki"
  if "$KWOKCTL" get clusters 2>/dev/null | grep -qx "$NAME" && kc get --raw /readyz >/dev/null 2>&1; then
    log "karmada-apiserver already running"; return
  fi
  "$KWOKCTL" delete cluster --name "$NAME" >/dev/null 2>&1 || true
  rm -f "$CFG"
  # kwokctl creates the pki at create time: the request-header CA is its ca.crt, and its
  # --proxy-client-cert-file (admin.crt, CN kwok-admin) is the name aggregation allows.
  # kwokctl v0.8.0 indexes its per-component patches by the position of a component's first
  # --extra-args (it panics otherwise): the first argument of each component comes first, in order.
  ports_config "$NAME" "$CP/kwokctl.yaml" || return 1
  "$KWOKCTL" create cluster --config "$CP/kwokctl.yaml" --name "$NAME" --runtime binary --quiet-pull \
    --kube-apiserver-binary "$APISERVER" --kube-controller-manager-binary "$CONTROLLER_MANAGER" \
    --kube-scheduler-binary "$SCHEDULER" --kwok-controller-binary "$KWOK" --etcd-binary "$ETCD" \
    --disable kube-scheduler,kwok-controller \
    --extra-args kube-apiserver=service-cluster-ip-range=10.96.0.0/16 \
    --extra-args kube-controller-manager=service-cluster-ip-range=10.96.0.0/16 \
    --extra-args "kube-apiserver=requestheader-client-ca-file=$pki/ca.crt" \
    --extra-args kube-apiserver=requestheader-allowed-names=kwok-admin \
    --extra-args kube-apiserver=requestheader-username-headers=X-Remote-User \
    --extra-args kube-apiserver=requestheader-group-headers=X-Remote-Group \
    --extra-args kube-apiserver=requestheader-extra-headers-prefix=X-Remote-Extra- \
    --extra-args kube-apiserver=enable-aggregator-routing=true \
    --extra-args kube-controller-manager=controllers=namespace,garbagecollector,serviceaccount-token,ttl-after-finished,clusterrole-aggregation \
    --kubeconfig "$CFG" --wait 60s >"$CP/logs/kwokctl.log" 2>&1 ||
    { cat "$CP/logs/kwokctl.log" >&2; log "karmada-apiserver failed to start"; return 1; }
  kubectl --kubeconfig "$CFG" config rename-context "kwok-$NAME" "$NAME" >/dev/null
  log "karmada-apiserver started"
}

crds() {
  kc create namespace karmada-system --dry-run=client -o yaml | kc apply -f - >/dev/null
  kc apply --server-side --force-conflicts -R -f "$KARMADA_SOURCES/charts/karmada/_crds/bases/" >/dev/null
  kc wait --for=condition=Established --timeout=60s crd --all >/dev/null
}

# A CA and a serving certificate for 127.0.0.1 (the webhook) and the inside address.
pki() {
  local d="$CP/pki"
  [ -f "$d/tls.crt" ] && return
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=kubectl-mcs test-bed karmada CA" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=karmada-webhook" -keyout "$d/tls.key" -out "$d/tls.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:%s.2,DNS:karmada-webhook.karmada-system.svc\n' "$KARMADA_NET" >"$d/ext"
  openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 3650 \
    -extfile "$d/ext" -out "$d/tls.crt" 2>/dev/null
}

webhook() {
  local p
  p=$(port webhook)
  run webhook "$KBIN/karmada-webhook" --kubeconfig="$CFG" --bind-address=127.0.0.1 --secure-port="$p" \
    --cert-dir="$CP/pki" --metrics-bind-address="127.0.0.1:$(port webhook-metrics)" \
    --health-probe-bind-address="127.0.0.1:$(port webhook-health)" --v=2
  wait_for "karmada-webhook to serve" 60 curl -sk --fail "https://127.0.0.1:$p/readyz"
  sed -e "s#https://karmada-webhook.karmada-system.svc:443#https://127.0.0.1:$p#" \
    -e "s#{{caBundle}}#$(base64 -w0 <"$CP/pki/ca.crt")#" \
    "$KARMADA_SOURCES/artifacts/deploy/webhook-configuration.yaml" | kc apply -f - >/dev/null
  log "webhook configurations registered (https://127.0.0.1:$p)"
}

netns_up() {
  ip netns list | grep -qw "$NETNS" && return
  ip netns add "$NETNS"
  ip link add "$VETH_HOST" type veth peer name "$VETH_NS"
  ip link set "$VETH_NS" netns "$NETNS"
  ip addr add "$KARMADA_NET.1/30" dev "$VETH_HOST"
  ip link set "$VETH_HOST" up
  ip netns exec "$NETNS" ip addr add "$KARMADA_NET.2/30" dev "$VETH_NS"
  ip netns exec "$NETNS" ip link set "$VETH_NS" up
  ip netns exec "$NETNS" ip link set lo up
  log "network namespace $NETNS ($KARMADA_NET.2, host side $KARMADA_NET.1 on $VETH_HOST)"
}

netns_down() {
  # Deleting the namespace deletes its end of the veth pair, and with it the host's.
  if ip netns list 2>/dev/null | grep -qw "$NETNS"; then ip netns delete "$NETNS" || true; fi
  ip link delete "$VETH_HOST" >/dev/null 2>&1 || true
}

aggregated() {
  local c="$KWOK_WORKDIR/clusters/$NAME" api etcd inside="$KARMADA_NET.2"
  api=$(sed -n 's/^ *- --secure-port=//p' "$c/kwok.yaml" | head -n 1)
  etcd=$(sed -n 's#^ *- --etcd-servers=http://127.0.0.1:##p' "$c/kwok.yaml" | head -n 1)
  netns_up
  # kwok's serving certificate has no SAN for the host side of the veth.
  kubectl --kubeconfig "$CFG" config view --flatten --minify -o yaml |
    sed -e "s#server: https://[^ ]*#server: https://$KARMADA_NET.1:$api#" \
        -e '/certificate-authority-data:/d' -e 's#^\(    server:.*\)#\1\n    insecure-skip-tls-verify: true#' \
    >"$CP/aggregated.kubeconfig"
  run aggregated-apiserver ip netns exec "$NETNS" "$KBIN/karmada-aggregated-apiserver" \
    --kubeconfig="$CP/aggregated.kubeconfig" --authentication-kubeconfig="$CP/aggregated.kubeconfig" \
    --authorization-kubeconfig="$CP/aggregated.kubeconfig" --etcd-servers="http://$KARMADA_NET.1:$etcd" \
    --bind-address="$inside" --secure-port=443 \
    --tls-cert-file="$CP/pki/tls.crt" --tls-private-key-file="$CP/pki/tls.key" \
    --audit-log-path=- --audit-log-maxage=0 --audit-log-maxbackup=0 --v=1
  # Endpoints and an EndpointSlice: the aggregator resolves the Service through one of them.
  kc apply -f - 2> >(grep -v 'Endpoints is deprecated' >&2) >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: karmada-aggregated-apiserver, namespace: karmada-system}
spec:
  ports: [{name: https, port: 443, targetPort: 443, protocol: TCP}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: karmada-aggregated-apiserver, namespace: karmada-system}
subsets:
- addresses: [{ip: $inside}]
  ports: [{name: https, port: 443, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: karmada-aggregated-apiserver
  namespace: karmada-system
  labels: {kubernetes.io/service-name: karmada-aggregated-apiserver}
addressType: IPv4
endpoints: [{addresses: [$inside], conditions: {ready: true}}]
ports: [{name: https, port: 443, protocol: TCP}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.cluster.karmada.io
  labels: {app: karmada-aggregated-apiserver, apiserver: "true"}
spec:
  group: cluster.karmada.io
  version: v1alpha1
  groupPriorityMinimum: 2000
  versionPriority: 10
  insecureSkipTLSVerify: true
  service: {name: karmada-aggregated-apiserver, namespace: karmada-system, port: 443}
YAML
  wait_for "APIService v1alpha1.cluster.karmada.io to be Available" 90 \
    kc wait --for=condition=Available --timeout=1s apiservice/v1alpha1.cluster.karmada.io
  log "cluster.karmada.io served by karmada-aggregated-apiserver"
}

controllers() {
  run controller-manager "$KBIN/karmada-controller-manager" --kubeconfig="$CFG" \
    --feature-gates=MultiClusterService=true --leader-elect=false --cluster-status-update-frequency=10s \
    --metrics-bind-address="127.0.0.1:$(port cm-metrics)" --health-probe-bind-address="127.0.0.1:$(port cm-health)" --v=2
  run scheduler "$KBIN/karmada-scheduler" --kubeconfig="$CFG" --leader-elect=false \
    --metrics-bind-address="127.0.0.1:$(port scheduler-metrics)" --health-probe-bind-address="127.0.0.1:$(port scheduler-health)" --v=2
}

join() {
  local m mcfg crd f try
  for m in "$@"; do
    mcfg="$TESTBED_DIR/$m.kubeconfig"
    # Karmada's guide has the members hold the mcs-api CRDs it bundles before anything is
    # exported; a member that has them already (kubectl mcs init's, say) keeps its own.
    for f in "$KARMADA_SOURCES"/charts/karmada/_crds/bases/multicluster/*.yaml; do
      crd=$(sed -n 's/^  name: //p' "$f" | head -n 1)
      kubectl --kubeconfig "$mcfg" --context "$m" get crd "$crd" >/dev/null 2>&1 ||
        kubectl --kubeconfig "$mcfg" --context "$m" apply --server-side -f "$f" >/dev/null
    done
    if kc get clusters.cluster.karmada.io "$m" >/dev/null 2>&1; then continue; fi
    # karmadactl waits 30 s for the member to fill its ServiceAccount token: a loaded machine's
    # fresh member can take longer, so try again (join takes over what a failed one created).
    for try in 1 2 3; do
      "$KBIN/karmada-karmadactl" join "$m" --kubeconfig "$CFG" --karmada-context "$NAME" \
        --cluster-kubeconfig "$mcfg" --cluster-context "$m" >"$CP/logs/join-$m.log" 2>&1 && break
      [ "$try" -lt 3 ] || { cat "$CP/logs/join-$m.log" >&2; log "join $m failed"; return 1; }
      log "join $m failed ($(tail -n 1 "$CP/logs/join-$m.log")); trying again"
    done
    log "$m joined (Push)"
  done
  for m in "$@"; do
    wait_for "cluster $m to be Ready" 120 kc wait --for=condition=Ready --timeout=1s "clusters.cluster.karmada.io/$m"
  done
  log "members Ready: $*"
}

pids() { cat "$CP"/pids/*.pid 2>/dev/null || true; }

# Every process of the control plane: ours and the kwokctl cluster's (their command lines name
# the cluster's directory).
all_pids() {
  local p
  for p in $(pids); do kill -0 "$p" 2>/dev/null && echo "$p"; done
  for p in /proc/[0-9]*; do
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "$KWOK_WORKDIR/clusters/$NAME/" && basename "$p"
  done
  return 0
}

stats() {
  local kb=0 p r
  for p in $(all_pids | sort -u); do
    r=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
    kb=$((kb + ${r:-0}))
    printf '%-10s %8d MB  %s\n' "$p" $(( ${r:-0} / 1024 )) "$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-90)"
  done
  echo "total RSS: $((kb / 1024)) MB"
  cat "$CP/stats" 2>/dev/null || true
}

stop_processes() {
  local p n
  for f in "$CP"/pids/*.pid; do
    [ -f "$f" ] || continue
    p=$(cat "$f"); n=$(basename "$f" .pid)
    if kill -0 "$p" 2>/dev/null; then
      kill "$p" 2>/dev/null || true
      for _ in $(seq 1 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
      kill -9 "$p" 2>/dev/null || true
      log "$n stopped (pid $p)"
    fi
    rm -f "$f"
  done
}

up() {
  local s members=("$@")
  [ ${#members[@]} -gt 0 ] || members=(member1 member2 member3)
  s=$(date +%s)
  build
  bins
  mkdir -p "$CP/pids" "$CP/logs"
  local missing=()
  for m in "${members[@]}"; do
    kubectl --kubeconfig "$TESTBED_DIR/$m.kubeconfig" --request-timeout=2s get --raw /readyz >/dev/null 2>&1 || missing+=("$m")
  done
  [ ${#missing[@]} -eq 0 ] || bash "$here/testbed.sh" up "${missing[@]}"
  local cps
  cps=$(date +%s)
  apiserver
  crds
  pki
  webhook
  aggregated
  controllers
  join "${members[@]}"
  # testbed.sh merges every $TESTBED_DIR/*.kubeconfig into $TESTBED_DIR/kubeconfig.
  bash "$here/testbed.sh" merge >/dev/null 2>&1 || true
  printf 'started: %s\ncontrol plane start: %d s (members and build excluded); up total: %d s\n' \
    "$(date -u +%FT%TZ)" $(( $(date +%s) - cps )) $(( $(date +%s) - s )) >"$CP/stats"
  log "up in $(( $(date +%s) - s )) s: context $NAME in $CFG (and $TESTBED_DIR/kubeconfig)"
}

cmd=${1:-up}; shift || true
mkdir -p "$TESTBED_DIR"
case "$cmd" in
  build) need_sources; build; echo "$KBIN" ;;
  up) need_sources; up "$@" ;;
  stop)
    bins
    stop_processes
    "$KWOKCTL" stop cluster --name "$NAME" >/dev/null 2>&1 || true
    log "stopped"
    ;;
  start)
    need_sources
    bins
    "$KWOKCTL" start cluster --name "$NAME" >/dev/null 2>&1 || true
    wait_for "karmada-apiserver" 60 kc get --raw /readyz
    webhook; aggregated; controllers
    log "started"
    ;;
  down)
    bins >/dev/null 2>&1 || KWOKCTL=$(ls -d "$CACHE"/bin/kwok-*/ 2>/dev/null | tail -n 1)kwokctl
    stop_processes
    "$KWOKCTL" delete cluster --name "$NAME" >/dev/null 2>&1 || true
    release_ports "$NAME"
    netns_down
    # The logs outlive the control plane, for a failed test's post-mortem (the last down's only).
    rm -rf "$TESTBED_DIR/karmada-logs"
    [ -d "$CP/logs" ] && mv "$CP/logs" "$TESTBED_DIR/karmada-logs"
    rm -rf "$CP" "$CFG"
    bash "$here/testbed.sh" merge >/dev/null 2>&1 || true
    log "down"
    ;;
  stats) stats ;;
  smoke)
    ns=karmada-smoke-$$
    kc create namespace "$ns" >/dev/null
    kc -n "$ns" create deployment serve --image=jeremyot/serve:0a40de8 --replicas=2 >/dev/null
    kc apply -f - >/dev/null <<YAML
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: serve, namespace: $ns}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: serve}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
YAML
    m1() { kubectl --kubeconfig "$TESTBED_DIR/member1.kubeconfig" --context member1 "$@"; }
    ok=0
    wait_for "2 available replicas of $ns/serve in member1" 120 \
      bash -c "[ \"\$(kubectl --kubeconfig '$TESTBED_DIR/member1.kubeconfig' --context member1 -n $ns get deploy serve -o jsonpath='{.status.availableReplicas}')\" = 2 ]" || ok=1
    m1 -n "$ns" get deploy,pods -o wide >&2 || true
    if kubectl --kubeconfig "$TESTBED_DIR/member2.kubeconfig" --context member2 -n "$ns" get deploy serve >/dev/null 2>&1; then
      log "smoke: member2 got the Deployment too"; ok=1
    fi
    kc delete namespace "$ns" --wait=false >/dev/null
    [ $ok = 0 ] && log "smoke: ok (PropagationPolicy -> Deployment running in member1 only)"
    exit $ok
    ;;
  env) echo "export KUBECONFIG=$TESTBED_DIR/kubeconfig" ;;
  *) echo "usage: $0 build|up|stop|start|down|stats|smoke|env [MEMBER...]" >&2; exit 2 ;;
esac
