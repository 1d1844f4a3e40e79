#!/usr/bin/env bash
# Real nodes for test-bed clusters: one node per cluster, with containerd, kubelet, kube-proxy and
# the cluster's DNS (CoreDNS with the Corefile of kube-system/coredns, test/testbed/nodedns) in a
# network namespace of its own. The nodes share one L2 segment (a bridge in a namespace of the
# bed's, with the host on it too, where the apiservers listen) and route each other's pod CIDRs,
# the flat pod network that Submariner, Cilium or a cloud VPC gives in production. Nothing on the
# host changes but the one veth of the segment: no sysctl, no iptables rule, no ip_forward.
#
#   node.sh check              exit 0 when this machine can run real nodes, else print why (exit 3)
#   node.sh build              install the Debian packages (root, when missing), build kubelet,
#                              kube-proxy, the images and nodedns into the cache
#   node.sh up NAME...         start the nodes of running test-bed clusters (testbed.sh does this
#                              for TESTBED_REALNODE)
#   node.sh down [NAME...]     stop them by recorded PID and remove every mount, namespace, link
#                              and cgroup they made (default: every node of the bed)
#   node.sh env                print the images and addresses the tests use, and per node
#                              APISERVER_NAME=https://HOST:PORT, where pods reach its apiserver
#   node.sh address            print the host's address on the bed's segment (testbed.sh
#                              advertises it and names it in a real-node apiserver's certificate)
#   node.sh leftovers          list any process, mount, namespace, link or cgroup of the bed's
#                              nodes still there (exit 1 if any): make test-traffic runs it after down
#
# TESTBED_PROXY_MODE: kube-proxy's mode, iptables (the default) or nftables.
# TESTBED_NODE_ZONES: NAME=ZONE,... the topology.kubernetes.io/zone label the kubelet registers
# cluster NAME's node with (NAME= for none); a node not named is in zone-NAME, as a cloud's are
# in some zone.
# KUBECTL_MCS_BINARY, when set, also runs `kubectl mcs dns-server` in each node on 127.0.0.1:5353,
# the address `kubectl mcs init --dns --dns-server=127.0.0.1:5353` makes CoreDNS forward to.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KUBECTL_MCS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-mcs}
TESTBED_DIR=${TESTBED_DIR:-$CACHE/testbed}
NODES="$TESTBED_DIR/nodes"
PACKAGES=(containerd runc containernetworking-plugins iptables nftables conntrack debootstrap iproute2 util-linux)
CNI_BIN=${CNI_BIN:-/usr/lib/cni}
DNS_SERVER_ADDR=127.0.0.1:5353
PROXY_MODE=${TESTBED_PROXY_MODE:-iptables}
case $PROXY_MODE in
  iptables | nftables) ;;
  *) echo "node: TESTBED_PROXY_MODE=$PROXY_MODE: want iptables or nftables" >&2; exit 2 ;;
esac
log() { echo "node: $*" >&2; }
# shellcheck source=steps.sh
. "$here/steps.sh"
# A real-node bed's build from nothing: the packages, then the images' Debian root, beside the Go
# builds of build.sh (its two phases).
export TESTBED_BUILD_STEPS=${TESTBED_BUILD_STEPS:-packages images tools kubernetes}

# One short tag per bed names its namespaces, links and cgroups (links take 15 characters), and
# one /24 of 10.250.0.0/16 is its segment: two beds on one machine never meet.
tag=$(echo -n "$TESTBED_DIR" | sha256sum | cut -c1-4)
seg=$(( 16#$(echo -n "$TESTBED_DIR" | sha256sum | cut -c5-6) % 250 + 1 ))
NETNS="mcs$tag-net" HOSTLINK="mcs${tag}h" HOSTIP="10.250.$seg.1"
index_of() { local d=${1//[^0-9]/}; echo $((10#${d:-0} % 100)); }
node_ip() { echo "10.250.$seg.$((100 + $(index_of "$1")))"; }
pod_cidr() { echo "10.$(( $(index_of "$1") % 200 + 10 )).0.0/16"; }
zone_of() {
  local z="zone-$1" pair zones=${TESTBED_NODE_ZONES:-}
  for pair in ${zones//,/ }; do [ "${pair%%=*}" = "$1" ] && z=${pair#*=}; done
  echo "$z"
}
apiserver_port() { # the port of cluster $1's apiserver, from the bed's kubeconfig
  local server
  server=$(kubectl --kubeconfig "$TESTBED_DIR/$1.kubeconfig" config view --minify --context "$1" -o jsonpath='{.clusters[0].cluster.server}')
  echo "${server##*:}"
}

# why prints the reason this machine cannot run real nodes, or nothing.
why() {
  [ "$(id -u)" = 0 ] || { echo "real nodes need root"; return; }
  [ "$(uname -s)" = Linux ] || { echo "real nodes need Linux"; return; }
  command -v ip >/dev/null || { echo "real nodes need iproute2 (ip)"; return; }
  local probe="mcs$tag-probe$$"
  ip netns add "$probe" 2>/dev/null || { echo "cannot create network namespaces (ip netns add)"; return; }
  ip netns del "$probe"
  # No `cmd | grep -q` under pipefail: grep's early exit can kill cmd with SIGPIPE and fail the test.
  grep -q ' cgroup2\? ' /proc/self/mounts || { echo "no cgroup hierarchy mounted"; return; }
}

install_packages() {
  local missing=() p
  # A removed package keeps its configuration, and dpkg -s still finds it: ask for its status.
  for p in "${PACKAGES[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  command -v apt-get >/dev/null || { log "missing packages ${missing[*]} and no apt-get"; exit 1; }
  step packages "installing ${missing[*]} (apt-get)" "30 s" || return 0
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# paths sets the binaries and images, building what is missing: the packages and then the images
# (network and disk) beside the Go builds (CPU), each phase saying so first, in order (steps.sh).
paths() {
  local root k8s images="$CACHE/.node-images.$$" pid status=0
  mkdir -p "$CACHE"
  TESTBED_BUILD_PLAN=1 install_packages
  TESTBED_BUILD_PLAN=1 bash "$here/../images/build.sh" >/dev/null
  { export TESTBED_BUILD_SAID="packages images"
    install_packages && bash "$here/../images/build.sh" >"$images"; } & pid=$!
  root=$(TESTBED_NODE_BINARIES=1 bash "$here/build.sh" | tail -n 1) || status=1
  wait "$pid" || status=1
  [ "${TESTBED_BUILD_PLAN:-}" != 1 ] || { rm -f "$images"; exit 0; }
  [ "$status" = 0 ] || { rm -f "$images"; exit 1; }
  k8s=$(ls -d "$root"/k8s-* | sort | tail -n 1)
  KUBELET=$k8s/kubelet KUBE_PROXY=$k8s/kube-proxy
  COREDNS=$(ls "$root"/coredns-*/coredns | sort | tail -n 1)
  eval "$(tr ' ' '\n' <"$images" | grep -E '^[A-Z_]+=')"
  rm -f "$images"
  NODEDNS="$CACHE/bin/nodedns"
  (cd "$here/../.." && CGO_ENABLED=0 go build -o "$NODEDNS.tmp.$$" ./test/testbed/nodedns && mv "$NODEDNS.tmp.$$" "$NODEDNS")
}

# segment creates the bed's L2 segment once: a bridge in $NETNS, the host on it at $HOSTIP.
segment() {
  [[ " $(ip netns list | awk '{print $1}' | tr '\n' ' ') " == *" $NETNS "* ]] && return
  ip netns add "$NETNS"
  ip -n "$NETNS" link set lo up
  ip -n "$NETNS" link add br0 type bridge
  ip -n "$NETNS" link set br0 up
  ip link add "$HOSTLINK" type veth peer name host netns "$NETNS"
  ip -n "$NETNS" link set host master br0 up
  ip addr add "$HOSTIP/24" dev "$HOSTLINK"
  ip link set "$HOSTLINK" up
}

# alive FILE: the PID recorded in FILE runs the program recorded beside it.
alive() {
  local pid; pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -e "/proc/$pid" ] && grep -qF "$(cat "$1.cmd")" "/proc/$pid/cmdline" 2>/dev/null
}

# spawn NAME PIDFILE LOG CMD...: start CMD in the node's namespace, record its PID. In a session
# of its own: a signal to the run's process group (Ctrl-C) leaves it to down, which also stops the
# containerd shims it started. setsid does not fork here (a background job leads no group).
spawn() {
  local ns=$1 pidfile=$2 logf=$3; shift 3
  setsid nsenter --net="/run/netns/$ns" "$@" >"$logf" 2>&1 </dev/null &
  echo $! >"$pidfile"
  echo -n "$1" >"$pidfile.cmd"
}

# stop PIDFILE: SIGTERM, then SIGKILL after 10 s, only if the PID still runs what we started.
stop() {
  local f=$1 pid
  alive "$f" || { rm -f "$f" "$f.cmd"; return 0; }
  pid=$(cat "$f")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
  [ -e "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f" "$f.cmd"
}

wait_for() { # wait_for SECONDS WHAT CMD...
  local t=$1 what=$2; shift 2
  for _ in $(seq 1 $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  log "$what: not ready after ${t}s"; return 1
}

cgroup_dirs() { # every v1 hierarchy (and the unified one) gets the node's cgroup root
  local name=$1
  awk '$3 == "cgroup" || $3 == "cgroup2" {print $2}' /proc/self/mounts | while read -r m; do echo "$m/mcs$tag-$name"; done
}

node_up() {
  local name=$1 cfg="$TESTBED_DIR/$1.kubeconfig" d="$NODES/$1" ns="mcs$tag-$1"
  local ip cidr; ip=$(node_ip "$name") cidr=$(pod_cidr "$name")
  [ -f "$cfg" ] || { log "no cluster $name in $TESTBED_DIR"; return 1; }
  if alive "$d/pids/kubelet" && alive "$d/pids/containerd"; then log "$name: node running"; return 0; fi
  node_down "$name" 2>/dev/null || true
  mkdir -p "$d/pids" "$d/logs" "$d/cni" "$d/pod-logs"

  ip netns add "$ns"
  ip link add "mcs${tag}n$(index_of "$name")" type veth peer name eth0 netns "$ns"
  ip link set "mcs${tag}n$(index_of "$name")" netns "$NETNS"
  ip -n "$NETNS" link set "mcs${tag}n$(index_of "$name")" master br0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$ip/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via "$HOSTIP"
  ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
  # Pods reach the apiservers at the host's address. The host has no route back to the pod CIDRs
  # (one would clash with another bed's: their pod CIDRs are the same), so what pods send there
  # leaves as from the node, as a node's masquerade does for off-cluster addresses in production.
  # Pod to pod keeps its addresses. The rule goes with the namespace.
  ip netns exec "$ns" iptables -w -t nat -A POSTROUTING -s "$cidr" -d "$HOSTIP/32" -j MASQUERADE

  # The node's processes reach the apiserver on the segment, verifying its certificate (testbed.sh
  # names $HOSTIP in it).
  kubectl --kubeconfig "$cfg" config view --flatten --minify --context "$name" >"$d/kubeconfig"
  local cl; cl=$(kubectl --kubeconfig "$d/kubeconfig" config view -o jsonpath='{.clusters[0].name}')
  kubectl --kubeconfig "$d/kubeconfig" config set-cluster "$cl" --server "https://$HOSTIP:$(apiserver_port "$name")" >/dev/null

  local c
  for c in $(cgroup_dirs "$name"); do
    mkdir -p "$c"
    if [ -f "$c/cpuset.cpus" ]; then
      cat "$(dirname "$c")/cpuset.cpus" >"$c/cpuset.cpus"
      cat "$(dirname "$c")/cpuset.mems" >"$c/cpuset.mems"
    fi
  done

  cat >"$d/cni/10-mcs.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "mcs", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}],
            "dataDir": "$d/cni/ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
JSON
  cat >"$d/containerd.toml" <<TOML
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$d/cni"
TOML
  spawn "$ns" "$d/pids/containerd" "$d/logs/containerd.log" containerd --config "$d/containerd.toml"
  wait_for 30 "$name: containerd" ctr --address "$d/containerd.sock" version
  local a
  for a in "$PAUSE_ARCHIVE" "$TOOLBOX_ARCHIVE"; do
    ctr --address "$d/containerd.sock" -n k8s.io images import --no-unpack "$a" >/dev/null
  done

  cat >"$d/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /mcs$tag-$name
containerRuntimeEndpoint: unix://$d/containerd.sock
address: $ip
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
clusterDNS: [$ip]
clusterDomain: cluster.local
resolvConf: ""
podLogsDir: $d/pod-logs
evictionHard: {memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
failSwapOn: false
serializeImagePulls: false
registerNode: true
YAML
  local zone; zone=$(zone_of "$name")
  spawn "$ns" "$d/pids/kubelet" "$d/logs/kubelet.log" "$KUBELET" --config "$d/kubelet.yaml" \
    --kubeconfig "$d/kubeconfig" --root-dir "$d/kubelet" --node-ip "$ip" --hostname-override "$name-node" --v=1 \
    ${zone:+--node-labels "topology.kubernetes.io/zone=$zone"}

  cat >"$d/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $d/kubeconfig}
hostnameOverride: $name-node
mode: $PROXY_MODE
clusterCIDR: $cidr
bindAddress: $ip
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
  spawn "$ns" "$d/pids/kube-proxy" "$d/logs/kube-proxy.log" "$KUBE_PROXY" --config "$d/kube-proxy.yaml" --v=1

  # kubeadm's CoreDNS configuration, as a kubeadm cluster starts with it.
  kubectl --kubeconfig "$cfg" --context "$name" -n kube-system create configmap coredns \
    --from-file=Corefile="$here/kubeadm.Corefile" --dry-run=client -o yaml |
    kubectl --kubeconfig "$cfg" --context "$name" create -f - >/dev/null 2>&1 || true
  spawn "$ns" "$d/pids/nodedns" "$d/logs/nodedns.log" "$NODEDNS" -kubeconfig "$d/kubeconfig" -context "$name" \
    -bind "$ip" -coredns "$COREDNS" -dir "$d"
  if [ -n "${KUBECTL_MCS_BINARY:-}" ]; then
    spawn "$ns" "$d/pids/dns-server" "$d/logs/dns-server.log" "$KUBECTL_MCS_BINARY" dns-server \
      --kubeconfig "$d/kubeconfig" --context "$name" --listen "$DNS_SERVER_ADDR"
  fi
  wait_for 60 "$name: node Ready" bash -c "kubectl --kubeconfig '$cfg' --context '$name' get node '$name-node' \
    -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
  log "$name: node $name-node Ready at $ip, pods in $cidr, zone ${zone:-none}"
}

# routes: every node reaches every other node's pod CIDR through that node.
routes() {
  local a b
  for a in "$NODES"/*/; do
    a=$(basename "$a")
    for b in "$NODES"/*/; do
      b=$(basename "$b")
      [ "$a" = "$b" ] && continue
      ip -n "mcs$tag-$a" route replace "$(pod_cidr "$b")" via "$(node_ip "$b")" 2>/dev/null || true
    done
  done
}

node_down() {
  local name=$1 d="$NODES/$1" ns="mcs$tag-$1" f c
  [ -d "$d" ] || return 0
  local stops=()
  for f in kubelet kube-proxy nodedns dns-server; do stop "$d/pids/$f" & stops+=($!); done
  for f in "${stops[@]}"; do wait "$f" || true; done
  # The containers, through their containerd: a task deleted there takes its shim with it.
  if alive "$d/pids/containerd"; then
    local ctr=(ctr --address "$d/containerd.sock" -n k8s.io) id
    for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true; done
    for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks delete -f "$id" >/dev/null 2>&1 || true; done
    for id in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers delete "$id" >/dev/null 2>&1 || true; done
  fi
  local cpid; cpid=$(cat "$d/pids/containerd" 2>/dev/null || true)
  stop "$d/pids/containerd"
  # The shims of a containerd that was gone before down are in no node cgroup, but in its session
  # (spawn's setsid), and they name its socket.
  if [ -n "$cpid" ]; then
    for p in $(ps -eo pid=,sid= | awk -v s="$cpid" '$2 == s {print $1}'); do
      grep -qF "$d/containerd.sock" "/proc/$p/cmdline" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
    done
  fi
  # Anything containerd could not reach is still in the node's cgroups.
  for c in $(cgroup_dirs "$name"); do
    [ -d "$c" ] || continue
    find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | xargs -r kill -KILL 2>/dev/null || true
  done
  # Pod network namespaces, overlay roots, kubelet volumes: deepest first.
  awk -v d="$d/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
  ip netns del "$ns" 2>/dev/null || true
  for c in $(cgroup_dirs "$name"); do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  rm -rf "$d"
}

cmd=${1:-}; shift || true
case "$cmd" in
  check)
    reason=$(why)
    [ -z "$reason" ] || { echo "$reason"; exit 3; }
    ;;
  build)
    reason=$(why)
    [ -z "$reason" ] || { echo "node: skipped: $reason" >&2; exit 0; }
    paths
    ;;
  up)
    reason=$(why)
    [ -z "$reason" ] || { log "cannot start real nodes: $reason"; exit 3; }
    paths
    segment
    for n in "$@"; do node_up "$n" || { log "$n: failed; logs in $NODES/$n/logs"; exit 1; }; done
    routes
    ;;
  down)
    if [ $# -eq 0 ]; then
      for n in "$NODES"/*/; do [ -d "$n" ] && set -- "$@" "$(basename "$n")"; done
    fi
    for n in "$@"; do node_down "$n"; done
    rmdir "$NODES" 2>/dev/null || true
    # The segment goes with the last node (its host veth with the namespace).
    if [ ! -d "$NODES" ]; then ip netns del "$NETNS" 2>/dev/null || true; fi
    ;;
  leftovers)
    left=$( {
      ip netns list 2>/dev/null | awk '{print $1}' | grep "^mcs$tag-" | sed 's/^/network namespace /' || true
      ip -o link 2>/dev/null | awk -F': ' '{print $2}' | grep "^mcs$tag" | sed 's/^/link /' || true
      awk -v d="$NODES/" 'index($5, d) == 1 {print "mount " $5}' /proc/self/mountinfo
      for m in $(awk '$3 == "cgroup" || $3 == "cgroup2" {print $2}' /proc/self/mounts); do
        for c in "$m"/mcs"$tag"-*; do [ -d "$c" ] && echo "cgroup $c"; done
      done
      for p in /proc/[0-9]*; do
        grep -qF "$NODES/" "$p/cmdline" 2>/dev/null && echo "process ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline" | cut -c1-120)"
      done
    } 2>/dev/null || true)
    [ -z "$left" ] || { echo "$left"; exit 1; }
    ;;
  env)
    eval "$(bash "$here/../images/build.sh" 2>/dev/null | tr ' ' '\n' | grep -E '^[A-Z_]+=')"
    echo "TOOLBOX_IMAGE=$TOOLBOX_IMAGE"
    echo "DNS_SERVER=$DNS_SERVER_ADDR"
    for n in "$NODES"/*/; do
      [ -d "$n" ] || continue
      n=$(basename "$n") v=$(echo "$n" | tr -c 'A-Za-z0-9_\n' _) # a name any shell takes
      echo "NODE_$v='$(node_ip "$n") $(pod_cidr "$n")'"
      echo "APISERVER_$v=https://$HOSTIP:$(apiserver_port "$n")"
    done
    ;;
  address) echo "$HOSTIP" ;;
  *) echo "usage: $0 check|build|up|down|env|leftovers|address [NAME...]" >&2; exit 2 ;;
esac
