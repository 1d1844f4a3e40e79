#!/usr/bin/env bash
# The reference scenario of Karmada's multi-cluster service discovery guide, on the local test
# bed: serve runs in member1 and is exported to the clusterset by kubectl mcs.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG=$(bash test/testbed/testbed.sh env | sed 's/^export KUBECONFIG=//')
export PATH="$PWD/bin:$PATH"
CONTEXTS=member1,member2,member3
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

for c in member1 member2 member3; do
  kubectl --context "$c" create namespace demo --dry-run=client -o yaml | kubectl --context "$c" apply -f - >/dev/null
done
kubectl --context member1 -n demo apply -f - >/dev/null <<'YAML'
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
        image: jeremyot/serve:0a40de8
        args:
        - "--message='hello from cluster member1 (Node: {{env \"NODE_NAME\"}} Pod: {{env \"POD_NAME\"}} Address: {{addr}})'"
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

# kwok members run no CoreDNS: give each the ConfigMap kubeadm writes, for init --dns to edit.
for c in member1 member2 member3; do
  kubectl --context "$c" -n kube-system create configmap coredns --from-file=Corefile=test/testbed/kubeadm.Corefile \
    --dry-run=client -o yaml | kubectl --context "$c" apply -f - >/dev/null
done

step kubectl mcs init --contexts=$CONTEXTS --dns
step kubectl mcs expose serve -n demo --contexts=$CONTEXTS
step kubectl --context member1 -n demo get serviceexports,svc,endpointslices
step kubectl mcs sync -n demo --contexts=$CONTEXTS
step kubectl --context member2 -n demo get serviceimports,svc,endpointslices
step kubectl mcs status -n demo --contexts=$CONTEXTS
# A real CoreDNS, with the Corefile init --dns wrote into member2, answers the clusterset name.
step go run ./test/testbed/resolve -context member2 serve.demo.svc.clusterset.local
printf '\nThe clusters stay up: KUBECONFIG=%s kubectl --context member2 get svc -A\nStop them with: make testbed-down\n' "$KUBECONFIG"
