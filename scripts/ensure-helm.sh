#!/usr/bin/env bash
# Builds the `helm` client the chart tests use (packaging/helm/kerf: lint, template) from
# its Go module at one pinned version, once, into ~/.cache/kerf/helm-v<version>/.
# Debian 12 packages no helm, and nothing here downloads a prebuilt binary. A second
# run is a no-op. Prints the path of the binary on its last line (HELM_BIN for tests).
set -euo pipefail

# The one pinned version: Helm 4 (Helm 3 is out of support), newest patch on the proxy.
HELM_VERSION=4.3.1

cache_root=${KUBE_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kerf}
dest="$cache_root/helm-v$HELM_VERSION"

mkdir -p "$cache_root"
# Two test runs starting together build once: the second waits for the first.
exec 9>"$cache_root/.helm-v$HELM_VERSION.lock"
flock 9

if [ -x "$dest/helm" ]; then
  echo "ensure-helm: helm v$HELM_VERSION cached" >&2
  echo "$dest/helm"
  exit 0
fi

command -v go >/dev/null || { echo "ensure-helm: the go toolchain is required" >&2; exit 1; }
started=$(date +%s)
work=$(mktemp -d "$cache_root/build-helm-v$HELM_VERSION.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The go command would otherwise write telemetry under ~/.config/go.
export XDG_CONFIG_HOME="$work/config" GOTELEMETRY=off CGO_ENABLED=0

cd "$work"
# A throwaway module requiring helm: `go build -mod=mod` resolves its dependencies
# exactly as helm's own go.mod pins them (go install refuses modules with replaces).
cat >go.mod <<EOF
module kerf.local/helm-build

go 1.24

require helm.sh/helm/v4 v$HELM_VERSION
EOF

echo "ensure-helm: building helm v$HELM_VERSION from its Go module (a few minutes on 2 cores)" >&2
mkdir -p out
go mod download helm.sh/helm/v4 >&2
go_line=$(awk '$1 == "go" { print $2; exit }' "$(go mod download -json helm.sh/helm/v4@v$HELM_VERSION | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')")
sed -i "s/^go 1.24$/go $go_line/" go.mod
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=v$HELM_VERSION -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
go build -mod=mod -trimpath -ldflags "$ldflags" -o out/helm helm.sh/helm/v4/cmd/helm >&2
out/helm version >&2

rm -rf "$dest"
mkdir -p "$dest"
mv out/helm "$dest/helm"
echo "ensure-helm: built v$HELM_VERSION in $(( $(date +%s) - started )) s" >&2
echo "$dest/helm"
