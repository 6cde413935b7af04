#!/usr/bin/env bash
# The project's test command (README, .ci/run). Installs what the tests need when it is
# missing, runs every test (Rust, then the browser tests), then builds the static binaries
# (dist profile, as shipped) and runs the black-box suite again against them.
# `scripts/test.sh --quick` skips the static-binary pass.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/stage.sh
outs=$(mktemp -d)
trap 'tool_stop; stage_summary; rm -rf "$outs"' EXIT

quick=0
[ "${1:-}" = "--quick" ] && quick=1

need_apt=()
command -v jq >/dev/null || need_apt+=(jq)
command -v file >/dev/null || need_apt+=(file)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "test.sh: installing ${need_apt[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >&2
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

stage build-tests cargo test --locked --no-run
stage lib-tests cargo test --locked --lib
stage ensure-kube tool_wait kube
KUBE_CONTROL_PLANE_DIR=$(tool_result kube)
export KUBE_CONTROL_PLANE_DIR
stage ensure-helm tool_wait helm
HELM_BIN=$(tool_result helm)
export HELM_BIN
stage it-tests cargo test --locked --test it
stage browser-tests scripts/e2e.sh

if [ "$quick" = 0 ]; then
  # The static builds' target dir lives in the cache, like the control plane, shared by
  # both architectures (the host's build scripts and proc macros are built once): a cold
  # build of every dependency in the dist profile costs minutes per target, and cargo's
  # fingerprints rebuild exactly what changed, so later runs on a machine pay for kerf
  # alone (docs/testing.md has the figures).
  static_target=${STATIC_TARGET_DIR:-$(scripts/ensure-target-cache.sh static 12 | tail -n 1)}
  echo "test.sh: building the static binary and re-running the black-box tests against it" >&2
  stage build-static env CARGO_TARGET_DIR="$static_target" packaging/build-static.sh >"$outs/static-bin"
  static_bin=$(tail -n 1 "$outs/static-bin")
  # Relative to here, or absolute when the target dir is.
  case "$static_bin" in /*) ;; *) static_bin="$PWD/$static_bin" ;; esac
  stage it-static env KERF_TEST_BIN="$static_bin" cargo test --locked --test it -- \
    appliance:: audit_pagination:: bad_input:: events_fault:: events_ingest:: ui_shell:: \
    identity:: identity_audit:: notify_delivery:: edge::

  # Edge hardware: the static aarch64 binary, run under qemu-user (Debian's qemu-user).
  echo "test.sh: building the static aarch64 binary and smoke-testing it under qemu-user" >&2
  if ! command -v qemu-aarch64 >/dev/null; then
    echo "test.sh: installing qemu-user" >&2
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq qemu-user >&2
  fi
  stage build-aarch64 env CARGO_TARGET_DIR="${AARCH64_TARGET_DIR:-$static_target}" \
    packaging/build-static.sh --arch aarch64 >"$outs/aarch64-bin"
  aarch64_bin=$(tail -n 1 "$outs/aarch64-bin")
  under_qemu="$outs/kerf-aarch64-under-qemu"
  printf '#!/bin/sh\nexec qemu-aarch64 %s "$@"\n' "$(realpath "$aarch64_bin")" >"$under_qemu"
  chmod +x "$under_qemu"
  stage edge-aarch64 env KERF_TEST_BIN="$under_qemu" cargo test --locked --test it -- edge::
fi
