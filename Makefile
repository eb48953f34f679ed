# Switchyard's build. `make test` is what CI runs (through .ci/run) and what
# the README tells contributors to run; it needs nothing but Go.

SHELL := /bin/bash
GO ?= go
TOOLS := $(GO) -C internal/tools tool
# The real kube-apiserver and etcd used by the Kubernetes tests, built once
# per machine (see internal/tools/testbin).
export SWITCHYARD_TESTBIN ?= $(HOME)/.cache/switchyard/testbin/k8s-1.37.2
LINT_BIN := $(HOME)/.cache/switchyard/bin/golangci-lint-v2.15.0

.PHONY: all build generate check-generated fmt-check vet lint test unit unit-vtproto testbin clean

all: build

# vtprotobuf compiles go-control-plane's generated marshallers, which
# encode resources without reflection (see site/performance.md); output is
# deterministic either way.
BUILD_TAGS ?= vtprotobuf

build:
	$(GO) build ./...
	$(GO) build -tags $(BUILD_TAGS) -o bin/switchyard ./cmd/switchyard

## generate: regenerate DeepCopy code and CRD manifests from apis/.
generate:
	$(TOOLS) controller-gen object paths=../../apis/...
	$(TOOLS) controller-gen crd paths=../../apis/... output:crd:artifacts:config=../../examples/deploy/crds

## check-generated: fail when generated files differ from what `make generate` writes.
check-generated: generate
	@if ! git diff --quiet -- apis examples/deploy/crds || [ -n "$$(git ls-files --others --exclude-standard -- apis examples/deploy/crds)" ]; then \
		git --no-pager diff --stat -- apis examples/deploy/crds; \
		git ls-files --others --exclude-standard -- apis examples/deploy/crds; \
		echo "generated files are stale: run 'make generate' and commit the result"; exit 1; \
	fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-ed (run gofmt -w):"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

$(LINT_BIN):
	@mkdir -p $(dir $@)
	$(GO) -C internal/tools/lint build -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

lint: $(LINT_BIN)
	$(LINT_BIN) run ./...

## testbin: build kube-apiserver and etcd for the Kubernetes tests (once per machine).
testbin:
	internal/tools/testbin/build.sh

## unit: the Go tests, with the race detector; TestSoak among them, in its
## short form (see soak below).
unit: testbin
	$(GO) test -race -count=1 -timeout 30m ./...

## unit-vtproto: the packages whose results are encoded bytes (versions,
## the engine's byte-for-byte comparisons, staging), again with the encoder
## the shipped binary uses: plain `go test` encodes with reflection instead.
## Without the race detector, which unit already ran on the same code.
VTPROTO_PKGS := ./internal/translator/... ./internal/xdscache/... ./internal/incremental/... ./internal/pipeline/...
unit-vtproto:
	$(GO) test -tags $(BUILD_TAGS) -count=1 $(VTPROTO_PKGS)

## test: everything CI checks.
test: check-generated fmt-check vet lint unit unit-vtproto fuzz-short bench-smoke

clean:
	$(GO) clean -testcache

## Fuzzing: every `func Fuzz...` in a _test.go file under internal/ and cmd/
## is a target, found by name so that a new one needs no edit here. A
## failing input is written to the package's testdata/fuzz/<Target>/ (commit
## it once fixed: it becomes a regression seed); inputs the fuzzer found
## interesting stay in the Go build cache and make the next run start ahead.
FUZZTIME ?= 60s
FUZZ_SHORT_TIME ?= 10s
FUZZ_TARGETS = $(shell grep -r --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*' internal cmd | sed -E 's#^(.*)/[^/]*_test.go:func #./\1 #' | sort)

# run-fuzz runs each target for $(1), one after the other, using every core.
define run-fuzz
	@set -e; set -- $(FUZZ_TARGETS); n=0; start=$$(date +%s); \
	while [ $$# -gt 1 ]; do \
		pkg=$$1 fn=$$2; shift 2; n=$$((n+1)); \
		echo "== $$fn ($$pkg) for $(1)"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$fn$$" -fuzztime $(1) -fuzzminimizetime 10s 2>&1 | grep -v '^fuzz: elapsed: [0-9]*s, \(execs\|gathering\)' | tail -n 20; \
		test $${PIPESTATUS[0]} -eq 0; \
	done; \
	echo "$$n fuzz targets, $$(( $$(date +%s) - start ))s"
endef

# run-fuzz-parallel runs every target at once for $(1), one worker each,
# so that a brief run of all of them fits in CI's budget; each prints its
# last status line (with its execution count) when done.
define run-fuzz-parallel
	@set -e; set -- $(FUZZ_TARGETS); dir=$$(mktemp -d); pids=""; start=$$(date +%s); \
	while [ $$# -gt 1 ]; do \
		pkg=$$1 fn=$$2; shift 2; \
		( $(GO) test $$pkg -run '^$$' -fuzz "^$$fn$$" -fuzztime $(1) -fuzzminimizetime 5s -parallel 1 > $$dir/$$fn.log 2>&1; echo $$? > $$dir/$$fn.rc ) & \
	done; wait; fail=0; \
	for rc in $$dir/*.rc; do \
		fn=$$(basename $$rc .rc); \
		if [ "$$(cat $$rc)" = 0 ]; then echo "ok   $$fn: $$(grep '^fuzz: elapsed' $$dir/$$fn.log | tail -n 1)"; \
		else echo "FAIL $$fn:"; cat $$dir/$$fn.log; fail=1; fi; \
	done; rm -rf $$dir; \
	echo "fuzz-short: $$(( $$(date +%s) - start ))s"; exit $$fail
endef

.PHONY: fuzz fuzz-short soak

## fuzz: run each fuzz target for FUZZTIME (default 60s).
fuzz:
	$(call run-fuzz,$(FUZZTIME))

## fuzz-short: run every fuzz target for FUZZ_SHORT_TIME (10s), all at once, as CI does.
fuzz-short:
	$(call run-fuzz-parallel,$(FUZZ_SHORT_TIME))

## soak: the long soak, not part of test: SOAK_STREAMS ADS streams (500)
## on loopback while objects and endpoints churn for SOAK_SECONDS (60); it
## prints its figures (convergence, goroutines, heap). `make test` runs the
## same TestSoak with its defaults, 50 streams for 3 seconds.
SOAK_STREAMS ?= 500
SOAK_SECONDS ?= 60
soak:
	SOAK_STREAMS=$(SOAK_STREAMS) SOAK_SECONDS=$(SOAK_SECONDS) $(GO) test ./internal/server -run '^TestSoak$$' -count=1 -v -timeout 15m

.PHONY: bench

## bench: the scale benchmarks of site/performance.md, after the machine
## they run on: full build, one proxy changed and live heap at 1k and 10k
## proxies, then the large ones (50k proxies, 50,000 clusters, 1,000 ADS
## streams), which a plain `go test -bench .` skips. BENCH_COUNT repeats
## each; BENCH_FLAGS adds go test flags (-tags vtprotobuf, say).
BENCH_COUNT ?= 1
BENCH_FLAGS ?=
BENCH_PKGS := ./internal/incremental ./internal/pipeline ./internal/xdsload
bench:
	@echo "nproc: $$(nproc)"; grep -m1 'model name' /proc/cpuinfo || true; $(GO) version; uptime
	$(GO) test $(BENCH_FLAGS) -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) -timeout 30m $(BENCH_PKGS)
	$(GO) test $(BENCH_FLAGS) -run '^$$' -bench Large -benchmem -count $(BENCH_COUNT) -timeout 60m $(BENCH_PKGS)
	$(MAKE) --no-print-directory bench-dir
	$(MAKE) --no-print-directory bench-k8s

# The directory-driven benchmarks read what `switchyard gen` writes, in the
# shape of site/performance.md: per 1,000 roots, 100 included proxies, 2
# routes of 3 weighted Services, 3 endpoints each in 2 zones, half of the
# hosts TLS. A directory is written once per size and kept under
# BENCH_DIR_ROOT (delete it after changing scalegen).
.PHONY: bench-dir bench-compare
BENCH_DIR_ROOT ?= $(HOME)/.cache/switchyard/bench
BENCH_DIR_SIZES ?= 1000 10000 50000
BENCH_GEN_FLAGS := --routes-per-proxy 2 --services-per-route 3 --endpoints-per-service 3 --zones 2 --tls-fraction 0.5

## bench-dir: directory read against the yaml.v3 floor, and time from
## `serve --source DIR` start to the first ADS response, at
## BENCH_DIR_SIZES roots (1,000, 10,000 and 50,000 plus a tenth included).
bench-dir:
	@for n in $(BENCH_DIR_SIZES); do \
	  dir=$(BENCH_DIR_ROOT)/roots-$$n; \
	  if [ ! -d $$dir ]; then \
	    $(GO) run ./cmd/switchyard gen --proxies $$((n + n / 10)) --included $$((n / 10)) $(BENCH_GEN_FLAGS) --out $$dir || exit 1; \
	  fi; \
	  echo "roots: $$n ($$dir)"; uptime; \
	  SWITCHYARD_BENCH_DIR=$$dir $(GO) test $(BENCH_FLAGS) -run '^$$' -bench 'Load$$|YAMLFloor|FastScan' -benchmem -count $(BENCH_COUNT) -timeout 60m ./internal/dirsource || exit 1; \
	  SWITCHYARD_BENCH_DIR=$$dir $(GO) test $(BENCH_FLAGS) -run '^$$' -bench TimeToFirstConfig -benchmem -count $(BENCH_COUNT) -timeout 60m ./internal/server || exit 1; \
	done

## bench-k8s: time from informers synced to the first CDS and LDS
## responses, on a real kube-apiserver holding BENCH_K8S_ROOTS roots of the
## directory shape; creating them through the API takes minutes.
BENCH_K8S_ROOTS ?= 10000
.PHONY: bench-k8s
bench-k8s: testbin
	@uptime
	SWITCHYARD_BENCH_K8S=1 SWITCHYARD_BENCH_K8S_ROOTS=$(BENCH_K8S_ROOTS) $(GO) test $(BENCH_FLAGS) -run '^$$' -bench K8sTimeToFirstConfig -benchmem -count $(BENCH_COUNT) -timeout 60m ./internal/server

# BENCH_BASELINE is the kept output of the last accepted run; a new run
# is compared with it so that a regression shows as a +% in benchstat's
# table. Accept a run with `cp $(BENCH_NEW) $(BENCH_BASELINE)` and commit it.
BENCH_BASELINE ?= site/bench/baseline.txt
BENCH_NEW ?= $(BENCH_DIR_ROOT)/new.txt
BENCHSTAT := $(GO) run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

## bench-compare: `make bench` (use BENCH_COUNT=3 or more) into
## BENCH_NEW, then benchstat against BENCH_BASELINE.
bench-compare:
	@mkdir -p $(dir $(BENCH_NEW))
	$(MAKE) --no-print-directory bench 2>&1 | tee $(BENCH_NEW)
	$(BENCHSTAT) $(BENCH_BASELINE) $(BENCH_NEW)

# The smoke benchmarks: the 1,000-proxy full build and one-proxy change,
# a fixed number of iterations each, with the encoder the binary ships.
# Their allocations and bytes per operation hardly move from run to run,
# unlike their times, so CI compares them with SMOKE_BASELINE and fails on
# a growth of more than SMOKE_TOLERANCE percent (internal/perf/benchcheck);
# times are printed, not checked. The one-proxy change runs 40 times: the
# gate's inspection of a route configuration runs a regular expression
# whose scratch space regexp keeps in a sync.Pool, which a collection in
# the middle of the run empties; over 5 changes that one refill was 5 %
# of the bytes per change, and two of them more than the tolerance.
.PHONY: bench-smoke bench-baseline
SMOKE_BASELINE ?= site/bench/smoke-baseline.txt
SMOKE_NEW ?= $(BENCH_DIR_ROOT)/smoke.txt
SMOKE_TOLERANCE ?= 10
SMOKE_RUN = echo "nproc: $$(nproc); load average: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	$(GO) test -tags $(BUILD_TAGS) -run '^$$' -benchmem -count 1 -benchtime 5x -cpu 2 \
	  -bench '^BenchmarkFullBuild$$/^proxies=1k$$' ./internal/incremental && \
	$(GO) test -tags $(BUILD_TAGS) -run '^$$' -benchmem -count 1 -benchtime 40x -cpu 2 \
	  -bench '^BenchmarkOneProxyChanged$$/^proxies=1k$$' ./internal/pipeline

## bench-smoke: the smoke benchmarks, checked against SMOKE_BASELINE.
bench-smoke:
	@mkdir -p $(dir $(SMOKE_NEW))
	@set -o pipefail; { $(SMOKE_RUN); } 2>&1 | tee $(SMOKE_NEW)
	$(GO) run ./internal/perf/benchcheck -tolerance $(SMOKE_TOLERANCE) $(SMOKE_BASELINE) $(SMOKE_NEW)

## bench-baseline: run the smoke benchmarks into SMOKE_BASELINE; commit it
## when a change is meant to allocate more (or to keep what it saved).
bench-baseline:
	@set -o pipefail; { $(SMOKE_RUN); } 2>&1 | tee $(SMOKE_BASELINE)

.PHONY: docs apidocs linkcheck

## Documentation site. docs builds bin/docs with Debian's mkdocs
## (`apt-get install -y mkdocs`; .ci/run installs it), from a copy of site/
## and README.md staged by internal/docsite/stage: MkDocs cannot build from
## the directory holding its own mkdocs.yml. --strict fails on a link to a
## page that does not exist, checkbuilt on any link of the built site that
## does not resolve in it (pages, anchors, the theme's files); linkcheck
## checks the Markdown's links and anchors (the unit tests run it too), and apidocs regenerates the API
## reference, site/reference/api.md, from apis/ (the unit tests fail when it
## is stale, as check-generated does for the CRDs).
DOCS_SRC := bin/docs-src
docs:
	$(GO) run ./internal/docsite/stage -out $(DOCS_SRC)
	mkdocs build --strict --quiet -f site/mkdocs.yml
	$(GO) run ./internal/docsite/checkbuilt bin/docs
	@echo "docs: bin/docs/index.html"

apidocs:
	$(GO) run ./internal/apiref/gen

linkcheck:
	$(GO) test -count=1 ./internal/docsite
