package main

import "testing"

func TestDeploymentMemoryOf(t *testing.T) {
	manifests := `apiVersion: v1
kind: ServiceAccount
metadata:
  name: kubectl-mcs
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kubectl-mcs-sync
spec:
  template:
    spec:
      containers:
      - name: sync
        resources:
          requests:
            memory: 96Mi
          limits:
            memory: 1Gi
`
	req, lim, err := deploymentMemoryOf([]byte(manifests))
	if err != nil || req != 96 || lim != 1024 {
		t.Fatalf("got %v MiB / %v MiB, %v; want 96 / 1024", req, lim, err)
	}
	if _, _, err := deploymentMemoryOf([]byte("kind: ServiceAccount\n")); err == nil {
		t.Fatal("no Deployment: want an error")
	}
}
