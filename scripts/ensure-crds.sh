#!/usr/bin/env bash
# Fetches the other projects' CRDs the agent's tests install on the real API server
# (tests/it/support/kube/manifests.rs), each from its own Go module through the Go module
# proxy (nothing else is downloaded), into ~/.cache/kerf/crds-<key>/, once. A second run
# is a no-op. Prints the directory on its last line.
#
#   VerticalPodAutoscaler: k8s.io/autoscaler/vertical-pod-autoscaler, deploy/vpa-v1-crd-gen.yaml
#   Argo Rollouts: github.com/argoproj/argo-rollouts, manifests/crds/rollout-crd.yaml
#   KEDA ScaledObject: github.com/kedacore/keda/v2, config/crd/bases/keda.sh_scaledobjects.yaml
#
# Each module's zip is read from the Go module proxy itself (`go env GOPROXY`), not with
# `go mod download`: that refuses a module whose go.mod asks for a newer Go than this
# machine's, and only one file of it is wanted.
set -euo pipefail

# module@version  file-in-module  name-in-cache
CRDS=(
  "k8s.io/autoscaler/vertical-pod-autoscaler@v1.8.1 deploy/vpa-v1-crd-gen.yaml vpa.yaml"
  "github.com/argoproj/argo-rollouts@v1.10.2 manifests/crds/rollout-crd.yaml argo-rollout.yaml"
  "github.com/kedacore/keda/v2@v2.21.1 config/crd/bases/keda.sh_scaledobjects.yaml keda-scaledobject.yaml"
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
command -v curl >/dev/null || { echo "ensure-crds: curl is required" >&2; exit 1; }
if ! command -v unzip >/dev/null; then
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq unzip >&2
fi
proxy=https://proxy.golang.org
if command -v go >/dev/null; then
  first=$(GOTELEMETRY=off go env GOPROXY | cut -d, -f1)
  case "$first" in http*) proxy=$first ;; esac
fi
work=$(mktemp -d "$cache_root/crds-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir out
for entry in "${CRDS[@]}"; do
  read -r module file name <<<"$entry"
  path=${module%@*} version=${module#*@}
  curl -sSfL --retry 3 -o module.zip "$proxy/$path/@v/$version.zip"
  unzip -p module.zip "$module/$file" > "out/$name" || { echo "ensure-crds: $module has no $file" >&2; exit 1; }
  [ -s "out/$name" ] || { echo "ensure-crds: $module has no $file" >&2; exit 1; }
  rm module.zip
  echo "ensure-crds: $name from $module ($file, $proxy)" >&2
done
touch out/.complete
rm -rf "$dest"
mv out "$dest"
echo "$dest"
