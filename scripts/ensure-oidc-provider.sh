#!/usr/bin/env bash
# Builds the OpenID Connect provider the sign-in tests run against
# (tests/oidc-provider: zitadel/oidc's op library over an in-memory store, with a test
# control API) from its Go module, once per source version, into
# ~/.cache/kerf/oidc-provider-<hash>/. The hash covers go.mod, go.sum and the .go
# files, so any change to the provider builds it again; go.sum pins every dependency
# (-mod=readonly). A second run is a no-op. Prints the path of the binary on its last
# line (OIDC_PROVIDER_BIN for tests).
set -euo pipefail
cd "$(dirname "$0")/.."

src="$PWD/tests/oidc-provider"
# The cache key: each file's name and content, in a fixed order.
key=$(cd "$src" && LC_ALL=C ls go.mod go.sum *.go | xargs sha256sum | sha256sum | cut -c1-16)

cache_root=${KUBE_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kerf}
dest="$cache_root/oidc-provider-$key"

mkdir -p "$cache_root"
# Two test runs starting together build once: the second waits for the first.
exec 9>"$cache_root/.oidc-provider-$key.lock"
flock 9

if [ -x "$dest/kerf-oidc-provider" ]; then
  echo "ensure-oidc-provider: provider $key cached" >&2
  echo "$dest/kerf-oidc-provider"
  exit 0
fi

command -v go >/dev/null || { echo "ensure-oidc-provider: the go toolchain is required" >&2; exit 1; }
started=$(date +%s)
work=$(mktemp -d "$cache_root/build-oidc-provider-$key.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The go command would otherwise write telemetry under ~/.config/go. The module's go
# line is met by the installed toolchain; never fetch another (GOTOOLCHAIN=local).
export XDG_CONFIG_HOME="$work/config" GOTELEMETRY=off CGO_ENABLED=0 GOTOOLCHAIN=local

echo "ensure-oidc-provider: building the test OIDC provider ($key)" >&2
mkdir -p "$work/out"
(cd "$src" && go build -mod=readonly -trimpath -buildvcs=false -ldflags "-s -w" \
  -o "$work/out/kerf-oidc-provider" .) >&2

rm -rf "$dest"
mv "$work/out" "$dest"
echo "ensure-oidc-provider: built $key in $(( $(date +%s) - started )) s" >&2
echo "$dest/kerf-oidc-provider"
