#!/usr/bin/env bash
# Fetches the other projects' CRDs the agent's tests install on the real API server
# (tests/it/support/kube/manifests.rs), each from its own Go module through the Go module
# proxy (nothing else is downloaded), into ~/.cache/kerf/crds-<key>/, once. A second run
# is a no-op. Prints the directory on its last line.
#
#   VerticalPodAutoscaler: k8s.io/autoscaler/vertical-pod-autoscaler, deploy/vpa-v1-crd-gen.yaml
set -euo pipefail

# module@version  file-in-module  name-in-cache
CRDS=(
  "k8s.io/autoscaler/vertical-pod-autoscaler@v1.8.1 deploy/vpa-v1-crd-gen.yaml vpa.yaml"
)

cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/kerf
key=$(printf '%s\n' "${CRDS[@]}" | sha256sum | cut -c1-16)
dest="$cache_root/crds-$key"
mkdir -p "$cache_root"
exec 9>"$cache_root/.crds-$key.lock"
flock 9
if [ -f "$dest/.complete" ]; then
  echo "ensure-crds: cached" >&2
  echo "$dest"
  exit 0
fi
command -v go >/dev/null || { echo "ensure-crds: the go toolchain is required" >&2; exit 1; }
work=$(mktemp -d "$cache_root/crds-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
export XDG_CONFIG_HOME="$work/config" GOTELEMETRY=off GOTOOLCHAIN=local GOFLAGS=-mod=mod
cd "$work"
mkdir out
for entry in "${CRDS[@]}"; do
  read -r module file name <<<"$entry"
  dir=$(go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -f "$dir/$file" ] || { echo "ensure-crds: $module has no $file" >&2; exit 1; }
  cp "$dir/$file" "out/$name"
  echo "ensure-crds: $name from $module ($file)" >&2
done
touch out/.complete
rm -rf "$dest"
mv out "$dest"
echo "$dest"
