# kubectl-mcs — see README.md.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

# krew (and semver) want vMAJOR.MINOR.PATCH: without a tag, git describe gives a bare commit hash,
# which becomes v0.0.0-g<hash> (the g keeps an all-digit hash a valid pre-release).
ifndef VERSION
GIT_DESCRIBE := $(shell git describe --tags --always --dirty 2>/dev/null)
VERSION := $(shell v='$(GIT_DESCRIBE)'; if [[ $$v =~ ^v[0-9]+\.[0-9]+\.[0-9]+ ]]; then echo "$$v"; \
             elif [ -n "$$v" ]; then echo "v0.0.0-g$$v"; else echo v0.0.0-dev; fi)
endif
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# The image make image builds, and the default --image of the manifests of every binary make builds
# (pkg/version.Image): IMAGE_REPO:VERSION. No registry by default; a release sets IMAGE_REPO to its
# registry's path (REGISTRY/kubectl-mcs), and an operator pushes the archive there.
IMAGE_REPO ?= kubectl-mcs/kubectl-mcs
IMAGE   := $(IMAGE_REPO):$(VERSION)
LDFLAGS := -s -w -X github.com/kubectl-mcs/kubectl-mcs/pkg/version.Version=$(VERSION) \
           -X github.com/kubectl-mcs/kubectl-mcs/pkg/version.Commit=$(COMMIT) \
           -X github.com/kubectl-mcs/kubectl-mcs/pkg/version.Image=$(IMAGE)
BIN     := $(CURDIR)/bin/kubectl-mcs
CACHE   ?= $(or $(KUBECTL_MCS_CACHE),$(HOME)/.cache/kubectl-mcs)
# The e2e suite gets a test bed of its own so that it never disturbs the demo's clusters.
E2E_TESTBED_DIR ?= $(CACHE)/testbed-e2e
BENCH_TESTBED_DIR ?= $(CACHE)/testbed-bench
SOAK_TESTBED_DIR ?= $(CACHE)/testbed-soak
# make test-traffic: clusters with real nodes (test/testbed/node.sh) and real packets between them.
TRAFFIC_TESTBED_DIR ?= $(CACHE)/testbed-traffic
PACKET_TESTBED_DIR ?= $(CACHE)/testbed-packets
# make test-production: sync and the DNS server as pods from the image, on real nodes.
PRODUCTION_TESTBED_DIR ?= $(CACHE)/testbed-production
BENCH_SERVICES ?= 200
# How many times test-traffic, test-production and conformance run their tests on their bed.
RUNS ?= 1
# Karmada material for the e2e "karmada" stand-in, kept outside the repository: its CRDs, and its
# sources (charts/karmada/_crds/bases/multicluster/ holds the mcs-api CRDs Karmada bundles). When
# absent, the tests that need it skip.
KARMADA_CRDS ?= $(abspath $(CURDIR)/../shared/testdata/karmada-crds)
KARMADA_SOURCES ?= $(abspath $(or $(KARMADA_SRC),$(CURDIR)/../shared/karmada))
# make test-karmada: a real Karmada control plane built from KARMADA_SOURCES (test/testbed/karmada.sh)
# with member1-3 joined, on a test bed of its own.
KARMADA_TESTBED_DIR ?= $(CACHE)/testbed-karmada
# make bench-karmada: sync --watch against Karmada's MultiClusterService controllers, member1 and
# member2 joined to a real control plane, on a test bed of its own.
BENCH_KARMADA_TESTBED_DIR ?= $(CACHE)/testbed-bench-karmada
# make bench-dns: kubectl mcs dns-server under load beside CoreDNS, one member of its own.
BENCH_DNS_TESTBED_DIR ?= $(CACHE)/testbed-bench-dns
# make conformance: the official KEP-1645 conformance suite, built from the mcs-api sources kept
# outside the repository (MCS_API/conformance), on a test bed of its own; its report goes to
# CONFORMANCE_REPORT_DIR. Without the sources: one line, and success.
MCS_API ?= $(abspath $(CURDIR)/../shared/mcs-api)
MCS_API_COMMIT ?= ded161a
CONFORMANCE_TESTBED_DIR ?= $(CACHE)/testbed-conformance
CONFORMANCE_REPORT_DIR ?= $(CURDIR)/docs/conformance
# The suite runs once per kube-proxy mode, on a bed of its own, its report in REPORT_DIR/MODE.
CONFORMANCE_PROXY_MODES ?= iptables nftables
# Release archives: one per platform, and the krew manifest dist/mcs.yaml pointing at
# $(DIST_BASE_URL)/ARCHIVE.
PLATFORMS     ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
DIST_BASE_URL ?= https://github.com/kubectl-mcs/kubectl-mcs/releases/download/$(VERSION)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
DIST_JOBS     ?= 3
IMAGE_ARCHIVE := dist/image/kubectl-mcs.tar
IMAGE_BINS    := $(addprefix dist/bin/,$(subst /,_,$(filter linux/%,$(PLATFORMS))))
# hack/image: one image per linux binary of dist/bin in an OCI image index, as an OCI archive.
IMAGE_BUILD    = SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) go run ./hack/image -ref $(IMAGE) -version $(VERSION) \
  -revision $(REVISION) -platforms "$$(echo $(filter linux/%,$(PLATFORMS)) | tr ' ' ,)" -bin-dir dist/bin -o $(IMAGE_ARCHIVE)
# What the image is made of: every .go and embedded file of the module's packages that kubectl-mcs
# and hack/image import, go.mod, go.sum, Go's version and the stamps; its digest heads IMAGE_STAMP.
IMAGE_STAMP   = $(dir $(IMAGE_ARCHIVE)).$(notdir $(IMAGE_ARCHIVE)).inputs
IMAGE_INPUTS  = { echo '$(IMAGE) $(VERSION) $(REVISION) $(filter linux/%,$(PLATFORMS)) $(SOURCE_DATE_EPOCH) $(LDFLAGS)'; \
  go version; cat go.mod go.sum; CGO_ENABLED=0 GOOS=linux go list -deps -f '{{if and .Module .Module.Main}}{{range .GoFiles}}{{$$.Dir}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$$.Dir}}/{{.}}{{"\n"}}{{end}}{{end}}' \
  ./cmd/kubectl-mcs ./hack/image | xargs cat; } | sha256sum | cut -c1-16
# IMAGE_BUILD, its three lines printed and kept in IMAGE_STAMP after the digest of its inputs.
IMAGE_BUILD_STAMPED = want=$$($(IMAGE_INPUTS)) && out=$$($(IMAGE_BUILD)) && echo "$$out" && \
  printf '%s\n%s\n' "$$want" "$$out" > $(IMAGE_STAMP)
KREW_VERSION  ?= v0.5.0

# Long work says where it is: make demo and make test print "make demo: [k/N] STEP: WHAT (about
# T)" before each of their steps (step/%, listed before each step among their prerequisites); a
# first test-bed build prints its own phases (test/testbed/build.sh, node.sh, test/images/build.sh).
# Figures: the 2-core machine, shared with other builds.
DEMO_STEPS := build testbed-build testbed-up demo
TEST_STEPS := test-unit test-krew test-e2e test-traffic test-production test-karmada test-image conformance
ABOUT_build           := kubectl-mcs (about 5 min the first time, then seconds)
ABOUT_testbed-build   := the clusters' binaries, packages and images (about 15 min the first time, then seconds)
ABOUT_testbed-up      := member1-3 (about 1 min with real nodes, 20 s without)
ABOUT_demo            := serve exported from member1 and called from member2 (about 1 min)
ABOUT_test-unit       := go vet, go test ./... (about 4 min)
ABOUT_test-krew       := make dist, krew install (about 1 min; the first time about 13 min)
ABOUT_test-e2e        := member1-4 and a Karmada stand-in (about 17 min; the first time, the test bed's build first)
ABOUT_test-traffic    := real nodes, real packets (about 3 min)
ABOUT_test-production := the image in pods on real nodes, sync in one member then in every member (about 13 min)
ABOUT_test-karmada    := a real Karmada control plane (about 2 min; the first time about 12 min more to build it)
ABOUT_test-image      := the image in a containerd of its own (about 30 s)
ABOUT_conformance     := the KEP-1645 conformance suite, kube-proxy in iptables then nftables mode (about 12 min; the first time about 3 min more to build it)

.PHONY: build dist image image-build test test-unit test-krew test-image test-e2e test-traffic test-production test-karmada conformance bench bench-first-packet bench-karmada bench-dns bench-scale bench-clusters soak fuzz-converge krew-build testbed-build testbed-up testbed-down demo clean

# kubectl_complete-mcs goes beside the binary: kubectl finds it on PATH for `kubectl mcs <TAB>`.
build:
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/kubectl-mcs
	install -m 0755 hack/dist/kubectl_complete-mcs $(dir $(BIN))kubectl_complete-mcs

# Cross-compiled, static, version-stamped binaries, packed with LICENSE, README.md and
# kubectl_complete-mcs (hack/dist), the krew manifest rendered from krew-manifest.yaml, and the
# image of the linux binaries (see image).
# The platforms build DIST_JOBS at a time: one build alone leaves a core idle much of the time.
dist:
	rm -rf dist
	$(MAKE) --no-print-directory -j$(DIST_JOBS) VERSION=$(VERSION) $(addprefix dist/bin/,$(subst /,_,$(PLATFORMS)))
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) go run ./hack/dist archive -version $(VERSION) \
	  -platforms "$$(echo $(PLATFORMS) | tr ' ' ,)" -bin-dir dist/bin -out dist
	@$(IMAGE_BUILD_STAMPED)
	rm -rf dist/bin
	go run ./hack/dist manifest -version $(VERSION) -base-url $(DIST_BASE_URL) -dir dist -o dist/mcs.yaml

# The image of sync --watch and dns-server in a cluster (hack/image): the static linux binaries, one
# image each, in an OCI image index built from nothing (no base image, no registry, no Docker),
# every time in it SOURCE_DATE_EPOCH, so that one commit gives one digest; written to
# IMAGE_ARCHIVE, an OCI archive that ctr images import, skopeo and crane take (see "The image" in
# docs/running-in-a-cluster.md). The last three lines: the reference, the digest, the archive.
# The archive is rebuilt only when what goes in changes (IMAGE_INPUTS, kept in IMAGE_STAMP with the
# three lines, which an image already built prints again): make test needs it three times (make
# dist, test-production, test-image) and builds it once.
image:
	@if [ -f $(IMAGE_ARCHIVE) ] && [ "$$(head -n 1 $(IMAGE_STAMP) 2>/dev/null)" = "$$($(IMAGE_INPUTS))" ]; then \
	  echo "image: $(IMAGE_ARCHIVE) is up to date"; tail -n +2 $(IMAGE_STAMP); \
	else $(MAKE) --no-print-directory image-build VERSION=$(VERSION); fi

# Not for use on its own: make image when IMAGE_ARCHIVE is out of date.
image-build:
	rm -rf $(IMAGE_ARCHIVE) $(IMAGE_STAMP) $(IMAGE_BINS)
	$(MAKE) --no-print-directory -j$(DIST_JOBS) VERSION=$(VERSION) $(IMAGE_BINS)
	@$(IMAGE_BUILD_STAMPED)
	@rm -rf $(IMAGE_BINS); rmdir dist/bin 2>/dev/null || true

# One platform's binary: dist/bin/OS_ARCH/kubectl-mcs[.exe].
dist/bin/%:
	@echo "dist: building $(subst _,/,$*) $(VERSION)"
	CGO_ENABLED=0 GOOS=$(firstword $(subst _, ,$*)) GOARCH=$(lastword $(subst _, ,$*)) \
	  go build -trimpath -ldflags '$(LDFLAGS)' -o $@/kubectl-mcs$(if $(filter windows_%,$*),.exe) ./cmd/kubectl-mcs

test: $(foreach s,$(TEST_STEPS),step/$(s) $(s))
test: STEPS = $(TEST_STEPS)
test: STEPS_OF = test
# make test runs the suite as a test: its report goes to the cache, not over the published one.
test: CONFORMANCE_REPORT_DIR = $(CACHE)/conformance-report

test-unit:
	go vet ./...
	go test -count=1 ./...

# FuzzConverge for FUZZTIME (10 minutes): sync's rounds against modelled apiservers and caches
# must stop writing (go test runs its seed corpus in test-unit).
FUZZTIME ?= 10m
fuzz-converge:
	go test -run '^$$' -fuzz '^FuzzConverge$$' -fuzztime $(FUZZTIME) ./pkg/sync/engine

# The image as a node runs it (build tag image, test/image): a containerd of the test's own imports
# IMAGE_ARCHIVE as ctr images import does and runs kubectl-mcs version in it, as the image's user.
# Where the machine cannot (not root, no containerd or runc): one line, and success.
test-image: image
	IMAGE_ARCHIVE=$(CURDIR)/$(IMAGE_ARCHIVE) IMAGE_REF=$(IMAGE) IMAGE_VERSION=$(VERSION) \
	  go test -count=1 -tags image -timeout 10m -v ./test/image

# krew and validate-krew-manifest, built from the Go module proxy into $(CACHE)/bin/krew-$(KREW_VERSION).
krew-build:
	KREW_VERSION=$(KREW_VERSION) KUBECTL_MCS_CACHE=$(CACHE) bash test/krew/build.sh

# The release as a user gets it: validate-krew-manifest on dist/mcs.yaml, then on the same
# manifest served from 127.0.0.1 with its install check (every platform), kubectl krew install
# --manifest --archive into a temporary KREW_ROOT, kubectl mcs through kubectl's plugin lookup,
# completion through kubectl_complete-mcs, uninstall.
test-krew: dist
	krew_bin=$$(KREW_VERSION=$(KREW_VERSION) KUBECTL_MCS_CACHE=$(CACHE) bash test/krew/build.sh); \
	KREW_BIN=$$krew_bin DIST_DIR=$(CURDIR)/dist DIST_VERSION=$(VERSION) \
	  go test -count=1 -tags krew -timeout 20m -v ./test/krew

# Where real nodes run, node.sh build builds it all: the packages and the images beside build.sh's
# Go builds, kubelet and kube-proxy in the same go build as the control plane. Each phase of a
# build from nothing says where it is (test/testbed/steps.sh); elsewhere node.sh says why it skips.
testbed-build:
	@if bash test/testbed/node.sh check >/dev/null; then bash test/testbed/node.sh build; \
	else bash test/testbed/build.sh && bash test/testbed/node.sh build; fi

# The suites below each run on a test bed of their own through test/testbed/with-bed.sh DIR
# [VAR=VALUE...] CLUSTER... -- COMMAND: it starts the bed (VAR=VALUE for testbed.sh up only), runs
# the command with TESTBED_DIR (and, on real nodes, node.sh env's TOOLBOX_IMAGE and DNS_SERVER) in
# its environment, always tears the bed down, and exits with the command's status.
# One package at a time (-p 1): both packages' tests share the bed, and test/e2e's sync --watch
# processes and CRD checks must not meet pkg/sync/reconciler's own reconcilers and CRDs.
test-e2e: build testbed-build
	bash test/testbed/with-bed.sh $(E2E_TESTBED_DIR) TESTBED_DUALSTACK=member4 member1 member2 member3 karmada member4 -- \
	  env E2E_KUBECONFIG=$(E2E_TESTBED_DIR)/kubeconfig E2E_BINARY=$(BIN) E2E_KARMADA_CRDS=$(KARMADA_CRDS) E2E_KARMADA_SOURCES=$(KARMADA_SOURCES) \
	  go test -p 1 -count=1 -tags e2e -timeout 40m -v ./test/e2e ./pkg/sync/reconciler

# Real packets: member1-3 with a real node each (containerd, kubelet, kube-proxy, CoreDNS running
# the Corefile of kube-system/coredns, and kubectl mcs dns-server), pod CIDRs routed between them;
# requests from a pod in member2 to the services member1 and member3 export. Where the machine
# cannot run real nodes (not root, no network namespaces): one line, and success.
test-traffic: build testbed-build
	@if ! why=$$(bash test/testbed/node.sh check); then echo "test-traffic: skipped: $$why"; exit 0; fi; \
	status=0; \
	bash test/testbed/with-bed.sh $(TRAFFIC_TESTBED_DIR) TESTBED_REALNODE=member1,member2,member3 KUBECTL_MCS_BINARY=$(BIN) \
	  member1 member2 member3 -- env TRAFFIC_KUBECONFIG=$(TRAFFIC_TESTBED_DIR)/kubeconfig TRAFFIC_BINARY=$(BIN) \
	  bash -c 'st=0; for run in $$(seq $(RUNS)); do TRAFFIC_IMAGE=$$TOOLBOX_IMAGE TRAFFIC_DNS_SERVER=$$DNS_SERVER go test -count=1 -tags traffic -timeout 30m -v ./test/traffic || st=1; done; exit $$st' \
	  || status=$$?; \
	TESTBED_DIR=$(TRAFFIC_TESTBED_DIR) bash test/testbed/node.sh leftovers || \
	  { echo "test-traffic: tearing the real nodes down left the above behind"; status=1; }; \
	exit $$status

# The production path on real nodes (test/traffic with TRAFFIC_MODE=production): the image of make
# image, and a rebuild of it with another version string (NEXT_IMAGE, this machine's platform
# only), loaded into every node's containerd; the DNS server applied in every member from
# dns-server --print-manifests, init --dns without --dns-server, sync deployed in member1 by
# kubectl mcs install; no kubectl-mcs process on the host. Then the seed scenario, a headless
# StatefulSet's per-pod names, and the faults (the leader pod deleted, a DNS server pod deleted,
# sync rolled to NEXT_IMAGE). It runs twice on one bed: sync installed in member1 (--mode=host),
# then moved to a sync in every member (--mode=per-member, TRAFFIC_SYNC_MODE), with the faults only
# that mode survives and the move back and forth. Where the machine cannot run real nodes: one
# line, and success.
NEXT_VERSION := $(VERSION)-next
NEXT_IMAGE   := $(IMAGE_REPO):$(NEXT_VERSION)
NEXT_ARCHIVE := $(CACHE)/images/kubectl-mcs-next.tar
# The images on a line of their own: make -n runs a line that calls $(MAKE), and only that one.
test-production: build testbed-build
	@if bash test/testbed/node.sh check >/dev/null; then mkdir -p $(dir $(NEXT_ARCHIVE)); \
	  $(MAKE) --no-print-directory image VERSION=$(NEXT_VERSION) PLATFORMS=linux/$$(go env GOARCH) IMAGE_ARCHIVE=$(NEXT_ARCHIVE) >/dev/null; \
	  $(MAKE) --no-print-directory image VERSION=$(VERSION); fi
	@if ! why=$$(bash test/testbed/node.sh check); then echo "test-production: skipped: $$why"; exit 0; fi; \
	status=0; \
	bash test/testbed/with-bed.sh $(PRODUCTION_TESTBED_DIR) TESTBED_REALNODE=member1,member2,member3 \
	  member1 member2 member3 -- env TRAFFIC_MODE=production TRAFFIC_KUBECONFIG=$(PRODUCTION_TESTBED_DIR)/kubeconfig TRAFFIC_BINARY=$(BIN) \
	  TRAFFIC_SYNC_IMAGE=$(IMAGE) TRAFFIC_SYNC_ARCHIVE=$(CURDIR)/$(IMAGE_ARCHIVE) TRAFFIC_NEXT_IMAGE=$(NEXT_IMAGE) TRAFFIC_NEXT_ARCHIVE=$(NEXT_ARCHIVE) \
	  bash -c 'st=0; for run in $$(seq $(RUNS)); do for mode in host per-member; do echo "test-production: sync in mode $$mode"; \
	    TRAFFIC_SYNC_MODE=$$mode TRAFFIC_IMAGE=$$TOOLBOX_IMAGE go test -count=1 -tags traffic -timeout 30m -v \
	    -run "^(TestSeedScenario|TestHeadlessStatefulSet|TestInstallWaitWrongServer|TestProduction.*)$$" ./test/traffic || st=1; done; done; exit $$st' \
	  || status=$$?; \
	TESTBED_DIR=$(PRODUCTION_TESTBED_DIR) bash test/testbed/node.sh leftovers || \
	  { echo "test-production: tearing the real nodes down left the above behind"; status=1; }; \
	exit $$status

# A soak of the real-node suites: test-traffic, test-production and conformance RUNS times each
# (default 5) on one bed each, with half the cores kept busy beside them (test/repeat.sh); then
# every test's pass count. Not part of make test: about RUNS x 22 minutes.
test-repeat: RUNS = 5
test-repeat: build testbed-build
	@bash test/repeat.sh $(RUNS) $(MAKE) --no-print-directory test-traffic test-production conformance RUNS=$(RUNS) \
	  CONFORMANCE_REPORT_DIR=$(CACHE)/conformance-report

# The seed scenarios through a real Karmada control plane (karmada-apiserver, -webhook,
# -aggregated-apiserver, -controller-manager, -scheduler built from KARMADA_SOURCES into the
# cache), member1-3 joined in Push mode. Without the sources: one line, and success.
test-karmada: build testbed-build
	@if [ ! -f "$(KARMADA_SOURCES)/go.mod" ]; then \
	  echo "test-karmada: skipped: no Karmada sources at $(KARMADA_SOURCES) (set KARMADA_SOURCES)"; exit 0; fi; \
	real=; \
	if bash test/testbed/node.sh check >/dev/null; then real=member1,member2; \
	else echo "test-karmada: no request from a pod: $$(bash test/testbed/node.sh check)"; fi; \
	bash test/testbed/with-bed.sh --karmada $(KARMADA_TESTBED_DIR) TESTBED_REALNODE=$$real KARMADA_SOURCES=$(KARMADA_SOURCES) \
	  member1 member2 member3 -- env E2E_KARMADA_REAL_KUBECONFIG=$(KARMADA_TESTBED_DIR)/kubeconfig E2E_BINARY=$(BIN) \
	  bash -c 'E2E_SERVE_IMAGE=$${TOOLBOX_IMAGE:-} go test -count=1 -tags e2e -timeout 20m -run ^TestKarmadaReal -v ./test/e2e'

# The official KEP-1645 conformance suite (kubernetes-sigs/mcs-api conformance/, test/conformance/run.sh):
# built into the cache, run with its report flags against member1 and member2, each with a real
# node, kubectl mcs dns-server on it, init --dns and one sync --watch; every spec must pass. The
# report (report.html, report.yaml, run.md) goes to CONFORMANCE_REPORT_DIR. Without the sources or
# real nodes: one line, and success.
conformance: build testbed-build
	@if [ ! -f "$(MCS_API)/conformance/go.mod" ]; then \
	  echo "conformance: skipped: no mcs-api sources at $(MCS_API) (set MCS_API)"; exit 0; fi; \
	if ! why=$$(bash test/testbed/node.sh check); then echo "conformance: skipped: $$why"; exit 0; fi; \
	suite=$$(MCS_API=$(MCS_API) bash test/conformance/run.sh build); \
	status=0; \
	for mode in $(CONFORMANCE_PROXY_MODES); do \
	  echo "conformance: kube-proxy in $$mode mode"; \
	  bash test/testbed/with-bed.sh $(CONFORMANCE_TESTBED_DIR) TESTBED_REALNODE=member1,member2 TESTBED_PROXY_MODE=$$mode \
	    KUBECTL_MCS_BINARY=$(BIN) member1 member2 -- env MCS_API=$(MCS_API) MCS_API_COMMIT=$(MCS_API_COMMIT) SUITE=$$suite \
	    BINARY=$(BIN) REPORT_DIR=$(CONFORMANCE_REPORT_DIR)/$$mode \
	    IMPL_VERSION=$$(git describe --tags --always --dirty 2>/dev/null || echo $(VERSION)) \
	    bash -c 'st=0; for run in $$(seq $(RUNS)); do bash test/conformance/run.sh run || st=1; done; exit $$st' || status=1; \
	  TESTBED_DIR=$(CONFORMANCE_TESTBED_DIR) bash test/testbed/node.sh leftovers || \
	    { echo "conformance: tearing the real nodes down left the above behind"; status=1; }; \
	done; \
	exit $$status

# Not a test: figures for BENCHMARKS.md (rewrites its generated section and bench/out/results.json).
bench: build testbed-build
	bash test/testbed/with-bed.sh $(BENCH_TESTBED_DIR) member1 member2 member3 -- \
	  env BENCH_SERVICES=$(BENCH_SERVICES) go run ./bench -kubeconfig $(BENCH_TESTBED_DIR)/kubeconfig -binary $(BIN)
	$(MAKE) --no-print-directory bench-first-packet
	$(MAKE) --no-print-directory bench-karmada
	$(MAKE) --no-print-directory bench-dns

# Time to first packet (part of bench), on member1 and member2 with real nodes: from expose, from a
# new provider pod's Ready, and from a pod's deletion, against a plain local Service in the same run.
bench-first-packet: build testbed-build
	@if ! why=$$(bash test/testbed/node.sh check); then echo "bench-first-packet: skipped: $$why"; exit 0; fi; \
	bash test/testbed/with-bed.sh $(PACKET_TESTBED_DIR) TESTBED_REALNODE=member1,member2 KUBECTL_MCS_BINARY=$(BIN) member1 member2 -- \
	  bash -c 'go run ./bench -first-packet -contexts member1,member2 -kubeconfig $(PACKET_TESTBED_DIR)/kubeconfig -binary $(BIN) \
	    -image $$TOOLBOX_IMAGE -dns-server $$DNS_SERVER'

# Against Karmada (part of bench): a provider slice's new endpoint carried to the consumer by sync
# --watch and by Karmada's MultiClusterService controllers, with the two-hop floor interleaved, idle
# and under churn, at BENCH_KARMADA_SIZES services (default 100,1000); bench/out/karmada.json,
# bench/out/karmada-cdf.svg and the "Against Karmada" section of BENCHMARKS.md. Without the Karmada
# sources: one line, and success.
bench-karmada: build testbed-build
	@if [ ! -f "$(KARMADA_SOURCES)/go.mod" ]; then \
	  echo "bench-karmada: skipped: no Karmada sources at $(KARMADA_SOURCES) (set KARMADA_SOURCES)"; exit 0; fi; \
	bash test/testbed/with-bed.sh --karmada $(BENCH_KARMADA_TESTBED_DIR) KARMADA_SOURCES=$(KARMADA_SOURCES) member1 member2 -- \
	  go run ./bench -karmada -kubeconfig $(BENCH_KARMADA_TESTBED_DIR)/kubeconfig -binary $(BIN)

# The DNS server under load (part of bench): kubectl mcs dns-server at 1,000 imports and a Headless
# import of 5,000 endpoints, and the bed's CoreDNS answering cluster.local from the same member's
# Services (the floor), loaded in turn by the same UDP workers; bench/out/dns.json and the "The DNS
# server" section of BENCHMARKS.md.
bench-dns: build testbed-build
	bash test/testbed/with-bed.sh $(BENCH_DNS_TESTBED_DIR) member1 -- \
	  go run ./bench -dns -contexts member1 -kubeconfig $(BENCH_DNS_TESTBED_DIR)/kubeconfig -binary $(BIN)

# Not a test either: the benchmark at 1,000-10,000 services on 5 clusters (BENCH_SCALE_RUNS, see
# bench/scale.sh), each run on a fresh test bed of its own; figures in bench/out/scale/ and the curve
# in BENCHMARKS.md. Takes an hour or more.
bench-scale: build testbed-build
	TESTBED_DIR=$(CACHE)/testbed-scale BINARY=$(BIN) bash bench/scale.sh

# Not a test either: the curve in members at a fixed number of services (BENCH_CLUSTERS_RUNS, entries
# as bench-scale's, ENDPOINTS then MODE last), on light members (TESTBED_LIGHT=1: an apiserver and
# etcd each), the bed kept from one run to the next (members added or deleted); figures in
# bench/out/clusters/, the section and its plot (bench/out/clusters.svg) and the 255-member model in
# BENCHMARKS.md. MODE: host (the default), one sync --watch for the clusterset; per-member, one sync
# --watch --local=memberK per member, member1's RSS and CPU measured, every sync's summed beside.
BENCH_CLUSTERS_RUNS ?= $(foreach n,5 10 20 40,$(foreach m,host per-member,100:$(n):500:1000:16:2:$(m)))

bench-clusters: build testbed-build
	TESTBED_DIR=$(CACHE)/testbed-clusters TESTBED_LIGHT=1 BINARY=$(BIN) BENCH_SCALE_RUNS="$(BENCH_CLUSTERS_RUNS)" \
	  BENCH_SCALE_OUT=bench/out/clusters BENCH_SCALE_RENDER=clusters BENCH_SCALE_GROW_BED=1 BENCH_SCALE_BUSY_RATE=0 \
	  BENCH_SCALE_STATUS=0 BENCH_SCALE_WATCHED_REPLAY=0 BENCH_SCALE_ARGS="-samples 50 -idle 30s" bash bench/scale.sh

# Not part of test: the e2e fault campaign (TestSyncFaultCampaign runs 20 kills) with 50 SIGKILLs of
# sync --watch and a member stopped and started meanwhile, on a test bed of its own; prints the
# counts. E2E_SEED=N replays a run's random choices. No Karmada stand-in: the campaign needs none
# (member4, dual-stack, because the suite's setup initialises it).
soak: build testbed-build
	bash test/testbed/with-bed.sh $(SOAK_TESTBED_DIR) TESTBED_DUALSTACK=member4 member1 member2 member3 member4 -- \
	  env E2E_SOAK=1 E2E_KUBECONFIG=$(SOAK_TESTBED_DIR)/kubeconfig E2E_BINARY=$(BIN) \
	  go test -count=1 -tags e2e -timeout 30m -run '^TestSyncSoak$$' -v ./test/e2e

# member1-3, with real nodes where the machine can run them (test/testbed/node.sh check).
testbed-up: build testbed-build
	real=$$(bash test/testbed/node.sh check >/dev/null && echo member1,member2,member3 || true); \
	TESTBED_REALNODE=$$real KUBECTL_MCS_BINARY=$(BIN) bash test/testbed/testbed.sh up member1 member2 member3

testbed-down:
	bash test/testbed/testbed.sh down

demo: $(foreach s,$(filter-out demo,$(DEMO_STEPS)),step/$(s) $(s)) step/demo
	bash hack/demo.sh
demo: STEPS = $(DEMO_STEPS)
demo: STEPS_OF = demo

# "make demo: [2/4] testbed-build: ..." before a step of make demo or make test (STEPS, STEPS_OF).
step/%:
	@echo "make $(STEPS_OF): [$(call position,$*,$(STEPS))/$(words $(STEPS))] $*: $(ABOUT_$*)"
# position WORD LIST: WORD's place in LIST, counted from 1.
position = $(call position_from,$1,$2,x)
position_from = $(if $2,$(if $(filter $1,$(firstword $2)),$(words $3),$(call position_from,$1,$(wordlist 2,$(words $2),$2),$3 x)))

clean:
	rm -rf bin dist
