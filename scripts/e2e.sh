#!/usr/bin/env bash
# Browser tests of the web UI (tests/e2e): headless Debian chromium driven by
# playwright-core, against the real kerf binary (`kerf demo` when it exists). Installs
# chromium and the pinned npm packages when missing. Screenshots go to
# tests/e2e/artifacts/ (git-ignored). Extra arguments go to `node --test`.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null; then
  echo "e2e.sh: installing chromium" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "e2e.sh: installing nodejs and npm" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >&2
fi
if [ ! -d tests/e2e/node_modules/playwright-core ]; then
  (cd tests/e2e && npm ci --no-audit --no-fund >&2)
fi

cargo build --locked --bin kerf >&2
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
export E2E_KERF_BIN="${E2E_KERF_BIN:-$target_dir/debug/kerf}"
export CHROMIUM="${CHROMIUM:-$(command -v chromium)}"

rm -rf tests/e2e/artifacts
cd tests/e2e
exec node --test --test-concurrency=1 "$@" .
