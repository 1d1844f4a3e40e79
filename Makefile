# kubectl-mcs — see README.md.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X github.com/kubectl-mcs/kubectl-mcs/pkg/version.Version=$(VERSION) \
           -X github.com/kubectl-mcs/kubectl-mcs/pkg/version.Commit=$(COMMIT)
BIN     := $(CURDIR)/bin/kubectl-mcs
CACHE   ?= $(or $(KUBECTL_MCS_CACHE),$(HOME)/.cache/kubectl-mcs)
# The e2e suite gets a test bed of its own so that it never disturbs the demo's clusters.
E2E_TESTBED_DIR ?= $(CACHE)/testbed-e2e
BENCH_TESTBED_DIR ?= $(CACHE)/testbed-bench
BENCH_SERVICES ?= 200
KARMADA_CRDS ?= $(abspath $(CURDIR)/../shared/testdata/karmada-crds)

.PHONY: build test test-unit test-e2e bench testbed-build testbed-up testbed-down demo clean

build:
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/kubectl-mcs

test: test-unit test-e2e

test-unit:
	go vet ./...
	go test -count=1 ./...

testbed-build:
	bash test/testbed/build.sh

test-e2e: build testbed-build
	TESTBED_DIR=$(E2E_TESTBED_DIR) bash test/testbed/testbed.sh up member1 member2 member3 karmada
	status=0; \
	TESTBED_DIR=$(E2E_TESTBED_DIR) E2E_KUBECONFIG=$(E2E_TESTBED_DIR)/kubeconfig E2E_BINARY=$(BIN) E2E_KARMADA_CRDS=$(KARMADA_CRDS) \
	  go test -count=1 -tags e2e -timeout 30m -v ./test/e2e || status=$$?; \
	TESTBED_DIR=$(E2E_TESTBED_DIR) bash test/testbed/testbed.sh down; \
	exit $$status

# Not a test: figures for BENCHMARKS.md (rewrites its generated section and bench/results.json).
bench: build testbed-build
	TESTBED_DIR=$(BENCH_TESTBED_DIR) bash test/testbed/testbed.sh up member1 member2 member3
	status=0; \
	BENCH_SERVICES=$(BENCH_SERVICES) go run ./bench -kubeconfig $(BENCH_TESTBED_DIR)/kubeconfig -binary $(BIN) || status=$$?; \
	TESTBED_DIR=$(BENCH_TESTBED_DIR) bash test/testbed/testbed.sh down; \
	exit $$status

testbed-up: testbed-build
	bash test/testbed/testbed.sh up member1 member2 member3

testbed-down:
	bash test/testbed/testbed.sh down

demo: build testbed-up
	bash hack/demo.sh

clean:
	rm -rf bin dist
