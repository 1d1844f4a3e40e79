#!/usr/bin/env bash
# The reference scenario of Karmada's multi-cluster service discovery guide, on the local test
# bed: serve runs in member1, is exported to the clusterset by kubectl mcs, and a pod in member2
# calls serve.demo.svc.clusterset.local and prints what member1's pod answered. The clusters have
# real nodes (test/testbed/node.sh) where the machine can run them; elsewhere kwok's, and the
# clusterset name is resolved by a CoreDNS on the host instead.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG=$(bash test/testbed/testbed.sh env | sed 's/^export KUBECONFIG=//')
export PATH="$PWD/bin:$PATH"
CONTEXTS=member1,member2,member3
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
real=
if kubectl --context member1 get node member1-node -o jsonpath='{.metadata.annotations}' 2>/dev/null | grep -vq kwok; then
  real=1
  eval "$(bash test/testbed/node.sh env)"
fi

for c in member1 member2 member3; do
  kubectl --context "$c" create namespace demo --dry-run=client -o yaml | kubectl --context "$c" apply -f - >/dev/null
done
kubectl --context member1 -n demo apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve
spec:
  replicas: 2
  selector:
    matchLabels:
      app: serve
  template:
    metadata:
      labels:
        app: serve
    spec:
      containers:
      - name: serve
        image: ${TOOLBOX_IMAGE:-mcs-test/toolbox}
        args: ["-ports=8080"]
        env:
        - {name: CLUSTER, value: member1}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
---
apiVersion: v1
kind: Service
metadata:
  name: serve
spec:
  ports:
  - port: 80
    targetPort: 8080
  selector:
    app: serve
YAML
kubectl --context member1 -n demo rollout status deployment/serve --timeout=60s >/dev/null

# kwok members run no CoreDNS: give each the ConfigMap kubeadm writes, for init --dns to edit
# (real nodes have it already, and run CoreDNS with it).
for c in member1 member2 member3; do
  kubectl --context "$c" -n kube-system create configmap coredns --from-file=Corefile=test/testbed/kubeadm.Corefile \
    --dry-run=client -o yaml | kubectl --context "$c" create -f - >/dev/null 2>&1 || true
done

# Each real node runs kubectl mcs dns-server beside CoreDNS, on 127.0.0.1:5353.
step kubectl mcs init --contexts=$CONTEXTS --dns --dns-server=${DNS_SERVER:-127.0.0.1:5353}
step kubectl mcs expose serve -n demo --contexts=$CONTEXTS
step kubectl --context member1 -n demo get serviceexports,svc,endpointslices
step kubectl mcs sync -n demo --contexts=$CONTEXTS
step kubectl --context member2 -n demo get serviceimports,svc,endpointslices
step kubectl mcs status -n demo --contexts=$CONTEXTS
if [ -n "$real" ]; then
  # A pod in member2 asks the clusterset name; member1's pod answers "POD CLUSTER PROTO PORT".
  kubectl --context member2 -n demo delete pod request --ignore-not-found >/dev/null
  step kubectl --context member2 -n demo run request --image="$TOOLBOX_IMAGE" --restart=Never \
    --command -- curl -sS --retry 20 --retry-all-errors --retry-delay 1 http://serve.demo.svc.clusterset.local
  kubectl --context member2 -n demo wait pod/request --for=jsonpath='{.status.phase}'=Succeeded --timeout=90s >/dev/null ||
    { kubectl --context member2 -n demo logs request >&2; exit 1; }
  step kubectl --context member2 -n demo logs request
  kubectl --context member2 -n demo delete pod request --wait=false >/dev/null
else
  echo "demo: this machine runs no real nodes ($(bash test/testbed/node.sh check || true)); resolving on the host instead"
  # member2's DNS server runs on this host too, and the CoreDNS that resolve starts forwards to it.
  dns_addr=127.0.0.1:${DEMO_DNS_PORT:-25353} health=127.0.0.1:${DEMO_DNS_HEALTH_PORT:-25354}
  step kubectl mcs init --contexts=member2 --dns --dns-server=$dns_addr
  printf '\n\033[1m$ %s &\033[0m\n' "kubectl mcs dns-server --context member2 --listen $dns_addr"
  dns_log=$(mktemp)
  kubectl-mcs dns-server --context member2 --listen "$dns_addr" --health-probe-bind-address "$health" 2>"$dns_log" &
  dns_pid=$!
  trap 'kill "$dns_pid" 2>/dev/null; rm -f "$dns_log"' EXIT
  # It answers once its caches have synced: its /readyz, read with bash alone.
  readyz() {
    exec 3<>"/dev/tcp/${health%:*}/${health#*:}" || return 1
    printf 'GET /readyz HTTP/1.0\r\n\r\n' >&3
    local status; read -r status <&3; exec 3>&-
    [[ $status == *" 200 "* ]]
  }
  for _ in $(seq 150); do
    readyz 2>/dev/null && break
    kill -0 "$dns_pid" 2>/dev/null || { cat "$dns_log" >&2; exit 1; }
    sleep 0.2
  done
  step go run ./test/testbed/resolve -context member2 serve.demo.svc.clusterset.local
fi
printf '\nThe clusters stay up: KUBECONFIG=%s kubectl --context member2 get svc -A\nStop them with: make testbed-down\n' "$KUBECONFIG"
printf 'kubectl mcs and its completion (kubectl mcs <TAB>) from this checkout: export PATH="%s:$PATH"\n' "$PWD/bin"
