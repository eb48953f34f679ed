# Switchyard's build. `make test` is what CI runs (through .ci/run) and what
# the README tells contributors to run; it needs nothing but Go.

SHELL := /bin/bash
GO ?= go
TOOLS := $(GO) -C internal/tools tool
# The real kube-apiserver and etcd used by the Kubernetes tests, built once
# per machine (see internal/tools/testbin).
export SWITCHYARD_TESTBIN ?= $(HOME)/.cache/switchyard/testbin/k8s-1.37.2
LINT_BIN := $(HOME)/.cache/switchyard/bin/golangci-lint-v2.15.0

.PHONY: all build generate check-generated fmt-check vet lint test unit testbin clean

all: build

build:
	$(GO) build ./...

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

## unit: the Go tests, with the race detector.
unit: testbin
	$(GO) test -race -count=1 ./...

## test: everything CI checks.
test: check-generated fmt-check vet lint unit

clean:
	$(GO) clean -testcache
