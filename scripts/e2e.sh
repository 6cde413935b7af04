#!/usr/bin/env bash
# Browser tests of the web UI (tests/e2e): headless Debian chromium driven by
# playwright-core, against the real kerf binary (`kerf demo`). Installs chromium and the
# pinned npm packages (playwright-core, and axe-core that the accessibility test injects)
# when missing. Builds kerf and the 10,000-workload seeder
# (examples/seed_workloads.rs) in the cargo target dir (CARGO_TARGET_DIR honoured).
# Screenshots go to tests/e2e/artifacts/ (git-ignored). Extra arguments go to `node --test`;
# E2E_CONCURRENCY sets how many test files run at once (default 2).
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
# connect.test.js backfills a real Prometheus.
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  bash scripts/ensure-prometheus.sh >&2
fi
# The sign-in tests' OIDC provider (scripts/test.sh builds it beside the Rust build and
# exports OIDC_PROVIDER_BIN; run alone, this builds or finds it in the cache).
if [ -z "${OIDC_PROVIDER_BIN:-}" ]; then
  OIDC_PROVIDER_BIN=$(scripts/ensure-oidc-provider.sh | tail -n 1)
fi
export OIDC_PROVIDER_BIN
if [ ! -d tests/e2e/node_modules/playwright-core ] || [ ! -d tests/e2e/node_modules/axe-core ]; then
  (cd tests/e2e && npm ci --no-audit --no-fund >&2)
fi

cargo build --locked --bin kerf --example seed_workloads --example remote_write_openmetrics >&2
# cargo metadata reports the target dir in force: CARGO_TARGET_DIR, config, or ./target.
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
export E2E_KERF_BIN="${E2E_KERF_BIN:-$target_dir/debug/kerf}"
export E2E_SEED_BIN="${E2E_SEED_BIN:-$target_dir/debug/examples/seed_workloads}"
export E2E_WRITE_BIN="${E2E_WRITE_BIN:-$target_dir/debug/examples/remote_write_openmetrics}"
export CHROMIUM="${CHROMIUM:-$(command -v chromium)}"

rm -rf tests/e2e/artifacts
cd tests/e2e
# Each file runs its own hub (`kerf demo` on port 0, its own data dir) and browser, so
# files run side by side (E2E_CONCURRENCY, default 2: one per core; at 3 the debug
# build served the first pages too slowly for the page loads' 30 s). The two
# that wait minutes for the demo's agents start first; the rest fill the other slots.
first=(guardrails.test.js agent.test.js)
files=("${first[@]}")
for f in *.test.js; do
  case " ${first[*]} " in *" $f "*) ;; *) files+=("$f") ;; esac
done
exec node --test --test-concurrency="${E2E_CONCURRENCY:-2}" "$@" "${files[@]}"
