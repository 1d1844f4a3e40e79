# Sourced by testbed.sh and karmada.sh: bins sets the paths of the test-bed binaries that
# build.sh builds (or finds) in the cache. Needs $here, the directory of these scripts.
bins() {
  local root k8s
  root=$(bash "$here/build.sh" | tail -n 1)
  k8s=$(ls -d "$root"/k8s-* | sort | tail -n 1)
  KWOKCTL=$(ls -d "$root"/kwok-*/ | sort | tail -n 1)kwokctl
  KWOK=$(dirname "$KWOKCTL")/kwok
  ETCD=$(ls "$root"/etcd-* | sort | tail -n 1)
  APISERVER=$k8s/kube-apiserver CONTROLLER_MANAGER=$k8s/kube-controller-manager SCHEDULER=$k8s/kube-scheduler
}
