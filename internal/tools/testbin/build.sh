#!/usr/bin/env bash
# Builds a real kube-apiserver and etcd from Go modules for controller-runtime's
# envtest, into a per-machine cache directory, and prints that directory.
#
#   dir="$(internal/tools/testbin/build.sh)"   # progress goes to stderr
#   KUBEBUILDER_ASSETS="$dir" go test ./...     # or SWITCHYARD_TESTBIN="$dir"
#
# Output directory: ${SWITCHYARD_TESTBIN:-$HOME/.cache/switchyard/testbin/k8s-1.37.2}
#
# Idempotent: a binary that already exists there is not rebuilt (delete it, or
# the directory, to force a rebuild). Each binary is linked into a temporary
# file in the same directory and renamed into place, so an interrupted build
# never leaves a half-written binary behind.
#
# Needs only a Go toolchain and access to the Go module proxy. Each binary has
# its own nested module (kube-apiserver/, etcd/) with a committed go.sum; the
# build runs with -mod=readonly so it never rewrites them. A cold build of
# kube-apiserver takes ~10 minutes on 2 cores; later runs are instant.
set -euo pipefail

K8S_VERSION=1.37.2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${SWITCHYARD_TESTBIN:-${HOME}/.cache/switchyard/testbin/k8s-${K8S_VERSION}}"

log() { printf 'testbin: %s\n' "$*" >&2; }

command -v go >/dev/null 2>&1 || { log "go not found in PATH"; exit 1; }

# Make the build independent of the caller's environment: no go.work, a clean
# GOFLAGS (it may carry -mod=mod, -race, -tags, ... meant for the main module;
# the flags we need are passed explicitly below), and static binaries.
export GOWORK=off
export GOFLAGS=
export CGO_ENABLED=0

mkdir -p "${out}"

tmpfiles=()
cleanup() {
	local f
	for f in "${tmpfiles[@]+"${tmpfiles[@]}"}"; do rm -f -- "${f}"; done
}
trap cleanup EXIT

# build NAME LDFLAGS TAGS: builds the nested module ${here}/NAME into ${out}/NAME.
build() {
	local name="$1" ldflags="$2" tags="$3"
	local dst="${out}/${name}"
	if [[ -x "${dst}" ]]; then
		log "${name}: already built (${dst})"
		return 0
	fi
	local tmp start
	tmp="$(mktemp "${out}/.${name}.tmp.XXXXXX")"
	tmpfiles+=("${tmp}")
	start=${SECONDS}
	log "${name}: building (this can take several minutes on a cold cache)..."
	(
		cd "${here}/${name}"
		go build -mod=readonly -trimpath -buildvcs=false \
			-tags="${tags}" -ldflags="${ldflags}" -o "${tmp}" .
	)
	chmod 0755 "${tmp}"
	mv -f -- "${tmp}" "${dst}"
	log "${name}: built in $((SECONDS - start))s -> ${dst}"
}

# Same version stamping as kubernetes' hack/lib/version.sh, so the server
# reports v1.37.2 (not v0.0.0-master) from /version and --version; the tags
# match kubernetes' own non-debug builds.
k8s_minor="${K8S_VERSION#*.}"
k8s_minor="${k8s_minor%%.*}"
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	k8s_ldflags+=" -X ${pkg}.gitVersion=v${K8S_VERSION}"
	k8s_ldflags+=" -X ${pkg}.gitMajor=${K8S_VERSION%%.*}"
	k8s_ldflags+=" -X ${pkg}.gitMinor=${k8s_minor}"
	k8s_ldflags+=" -X ${pkg}.gitTreeState=clean"
done

build etcd "-s -w" ""
build kube-apiserver "${k8s_ldflags}" "selinux,notest,grpcnotrace"

echo "${out}"
