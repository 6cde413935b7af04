#!/usr/bin/env bash
# Builds the Kubernetes control plane the agent's tests run against (kube-apiserver,
# kube-controller-manager, kube-scheduler) from the Kubernetes Go modules, once per
# version, into ~/.cache/kerf/kube-v<version>/, and installs Debian's etcd-server when
# etcd is missing. Nothing downloads a prebuilt binary. A second run is a no-op.
# Prints the directory holding the binaries on its last line (KUBE_CONTROL_PLANE_DIR for
# tests; not KERF_*, which kerf itself reads as configuration).
set -euo pipefail

# The one pinned version: the newest v1.36 patch the Go module proxy serves.
KUBE_VERSION=1.36.3

cache_root=${KUBE_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kerf}
dest="$cache_root/kube-v$KUBE_VERSION"
bins=(kube-apiserver kube-controller-manager kube-scheduler)

if ! command -v etcd >/dev/null; then
  echo "ensure-kube: installing Debian's etcd-server" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq etcd-server >&2
  # The package starts a system etcd on 2379; the tests start their own on free ports.
  (systemctl stop etcd 2>/dev/null || service etcd stop 2>/dev/null || true) >&2
  (systemctl disable etcd 2>/dev/null || true) >&2
fi

built() {
  for b in "${bins[@]}"; do [ -x "$dest/$b" ] || return 1; done
}

mkdir -p "$cache_root"
# Two test runs starting together build once: the second waits for the first.
exec 9>"$cache_root/.kube-v$KUBE_VERSION.lock"
flock 9

if built; then
  echo "ensure-kube: control plane v$KUBE_VERSION cached" >&2
  echo "$dest"
  exit 0
fi

command -v go >/dev/null || { echo "ensure-kube: the go toolchain is required" >&2; exit 1; }
started=$(date +%s)
work=$(mktemp -d "$cache_root/build-v$KUBE_VERSION.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The go command would otherwise write telemetry under ~/.config/go.
export XDG_CONFIG_HOME="$work/config" GOTELEMETRY=off CGO_ENABLED=0

cd "$work"
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at
# v0.0.0, served by no proxy; each is released as v0.<minor>.<patch>. Read the list from
# the published go.mod so it stays exact for the pinned version.
kube_mod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -f "$kube_mod" ] || { echo "ensure-kube: could not fetch k8s.io/kubernetes@v$KUBE_VERSION" >&2; exit 1; }
staging=$(awk '$2 == "v0.0.0" && $1 ~ /^k8s\.io\// { print $1 }' "$kube_mod" | sort -u)
[ -n "$staging" ] || { echo "ensure-kube: no staging modules found in $kube_mod" >&2; exit 1; }

go_line=$(awk '$1 == "go" { print $2; exit }' "$kube_mod")
{
  echo "module kerf.local/kube-build"
  echo
  echo "go $go_line"
  echo
  echo "require k8s.io/kubernetes v$KUBE_VERSION"
  echo
  for m in $staging; do echo "replace $m => $m v0.${KUBE_VERSION#1.}"; done
} >go.mod

echo "ensure-kube: building kube-apiserver, kube-controller-manager, kube-scheduler v$KUBE_VERSION (4-7 min on 2 cores)" >&2
ver=k8s.io/component-base/version
minor=${KUBE_VERSION#1.}
minor=${minor%%.*}
ldflags="-s -w -X $ver.gitVersion=v$KUBE_VERSION -X $ver.gitMajor=1 -X $ver.gitMinor=$minor -X $ver.gitTreeState=clean"
mkdir -p out
go build -mod=mod -trimpath -ldflags "$ldflags" -o out/ \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler >&2

rm -rf "$dest"
mv out "$dest"
echo "ensure-kube: built v$KUBE_VERSION in $(( $(date +%s) - started )) s" >&2
echo "$dest"
