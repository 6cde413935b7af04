#!/usr/bin/env bash
# The project's test command (README, .ci/run). Installs what the tests need when it is
# missing, runs every test (Rust, then the browser tests), and builds the static binaries
# (dist profile, as shipped, both architectures) beside the tests, then runs the
# black-box suite again against them. `scripts/test.sh --quick` skips the static builds.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/stage.sh
outs=$(mktemp -d)
trap 'tool_stop; stage_summary; rm -rf "$outs"' EXIT

quick=0
[ "${1:-}" = "--quick" ] && quick=1

# Debian packages, all in one apt run before anything starts beside it (two apt runs at
# once would fight over dpkg's lock): the tests' tools, the browser, and for the static
# builds musl's and the aarch64 cross compiler and qemu-user.
need_apt=()
command -v jq >/dev/null || need_apt+=(jq)
command -v file >/dev/null || need_apt+=(file)
command -v chromium >/dev/null || need_apt+=(chromium)
command -v node >/dev/null || need_apt+=(nodejs)
command -v npm >/dev/null || need_apt+=(npm)
if [ "$quick" = 0 ]; then
  command -v x86_64-linux-musl-gcc >/dev/null || command -v musl-gcc >/dev/null ||
    need_apt+=(musl-tools)
  command -v aarch64-linux-gnu-gcc >/dev/null || need_apt+=(gcc-aarch64-linux-gnu)
  command -v qemu-aarch64 >/dev/null || need_apt+=(qemu-user)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "test.sh: installing ${need_apt[*]}" >&2
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    "${need_apt[@]}" >&2
fi
# The static builds' Rust targets, added here for the same reason (one rustup at a time).
if [ "$quick" = 0 ]; then
  for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
    rustup target list --installed 2>/dev/null | grep -qx "$target" || rustup target add "$target" >&2
  done
fi

ensure_tools() {
  scripts/ensure-prometheus.sh
  scripts/ensure-python-tools.sh >/dev/null
  scripts/ensure-smtp.sh
  scripts/ensure-victoria-metrics.sh
}
stage ensure-tools ensure_tools
# The cached Go builds (the real Kubernetes control plane the agent and sim tests run
# against, and helm for the chart tests) run beside the test build: cold, they take
# 13 and 3.5 minutes, mostly while cargo links or waits on one crate. Each keeps its
# output and exit status, and the black-box tests, which need them, wait for them
# (tool_wait) after the unit tests.
tool_start kube scripts/ensure-kube.sh
tool_start helm scripts/ensure-helm.sh
# The test OIDC provider (tests/oidc-provider) the sign-in tests run against: under a
# minute cold, rebuilt when its source changes.
tool_start oidc scripts/ensure-oidc-provider.sh

stage build-tests cargo test --locked --no-run

if [ "$quick" = 0 ]; then
  # The static binaries (dist profile: fat LTO, one codegen unit) are built beside the
  # tests, at the lowest priority, so they take the cores the tests leave idle (the
  # black-box and browser tests wait on servers much of the time) rather than adding
  # their whole build time after them. Both share one target dir kept in the cache (the
  # host's build scripts and proc macros built once; cargo's fingerprints rebuild only
  # what changed); the aarch64 build starts when the x86_64 one has ended, whose
  # binary the tests need first.
  static_target=${STATIC_TARGET_DIR:-$(scripts/ensure-target-cache.sh static 12 | tail -n 1)}
  tool_start static-x86_64 nice -n 19 env CARGO_TARGET_DIR="$static_target" \
    packaging/build-static.sh
  tool_start static-aarch64 bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 2; done; shift; exec "$@"' \
    _ "${TOOL_PIDS[static-x86_64]}" \
    nice -n 19 env CARGO_TARGET_DIR="${AARCH64_TARGET_DIR:-$static_target}" \
    packaging/build-static.sh --arch aarch64
fi

stage lib-tests cargo test --locked --lib
stage ensure-kube tool_wait kube
KUBE_CONTROL_PLANE_DIR=$(tool_result kube)
export KUBE_CONTROL_PLANE_DIR
stage ensure-crds scripts/ensure-crds.sh
THIRD_PARTY_CRDS_DIR=$(scripts/ensure-crds.sh 2>/dev/null | tail -n 1)
export THIRD_PARTY_CRDS_DIR
stage ensure-helm tool_wait helm
HELM_BIN=$(tool_result helm)
export HELM_BIN
stage ensure-oidc tool_wait oidc
OIDC_PROVIDER_BIN=$(tool_result oidc)
export OIDC_PROVIDER_BIN
stage it-tests cargo test --locked --test it
stage browser-tests scripts/e2e.sh

if [ "$quick" = 0 ]; then
  stage build-static tool_wait static-x86_64
  static_bin=$(tool_result static-x86_64)
  # Relative to here, or absolute when the target dir is.
  case "$static_bin" in /*) ;; *) static_bin="$PWD/$static_bin" ;; esac
  stage it-static env KERF_TEST_BIN="$static_bin" cargo test --locked --test it -- \
    appliance:: audit_pagination:: bad_input:: events_fault:: events_ingest:: ui_shell:: \
    identity:: identity_audit:: notify_delivery:: edge::

  # Edge hardware: the static aarch64 binary, run under qemu-user (Debian's qemu-user).
  stage build-aarch64 tool_wait static-aarch64
  aarch64_bin=$(tool_result static-aarch64)
  under_qemu="$outs/kerf-aarch64-under-qemu"
  printf '#!/bin/sh\nexec qemu-aarch64 %s "$@"\n' "$(realpath "$aarch64_bin")" >"$under_qemu"
  chmod +x "$under_qemu"
  stage edge-aarch64 env KERF_TEST_BIN="$under_qemu" cargo test --locked --test it -- edge::
fi
