#!/usr/bin/env bash
# The project's test command (README, .ci/run). Installs what the tests need when it is
# missing, runs every test (Rust, then the browser tests), then runs the black-box suite again against the static
# release binary. `scripts/test.sh --quick` skips the static-binary pass.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1

need_apt=()
command -v jq >/dev/null || need_apt+=(jq)
command -v file >/dev/null || need_apt+=(file)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "test.sh: installing ${need_apt[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >&2
fi

scripts/ensure-prometheus.sh
scripts/ensure-python-tools.sh >/dev/null
scripts/ensure-smtp.sh
scripts/ensure-victoria-metrics.sh
# The real Kubernetes control plane the agent and sim tests run against (cached build).
KUBE_CONTROL_PLANE_DIR=$(scripts/ensure-kube.sh | tail -n 1)
export KUBE_CONTROL_PLANE_DIR
# helm for the chart tests (tests/it/helm_chart.rs): built from its Go module once, cached.
HELM_BIN=$(scripts/ensure-helm.sh | tail -n 1)
export HELM_BIN

cargo test --locked
scripts/e2e.sh

if [ "$quick" = 0 ]; then
  echo "test.sh: building the static binary and re-running the black-box tests against it" >&2
  static_bin=$(packaging/build-static.sh | tail -n 1)
  # Relative to here, or absolute when CARGO_TARGET_DIR is.
  case "$static_bin" in /*) ;; *) static_bin="$PWD/$static_bin" ;; esac
  KERF_TEST_BIN="$static_bin" cargo test --locked --test it -- \
    appliance:: audit_pagination:: bad_input:: events_fault:: events_ingest:: ui_shell:: \
    identity:: identity_audit:: notify_delivery:: edge::

  # Edge hardware: the static aarch64 binary, run under qemu-user (Debian's qemu-user).
  echo "test.sh: building the static aarch64 binary and smoke-testing it under qemu-user" >&2
  if ! command -v qemu-aarch64 >/dev/null; then
    echo "test.sh: installing qemu-user" >&2
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq qemu-user >&2
  fi
  # Its target dir lives in the cache, like the control plane: a cold release build of
  # every dependency for aarch64 costs about as much as the x86_64 one, and cargo's
  # fingerprints rebuild exactly what changed, so later runs on a machine pay for kerf
  # alone (docs/testing.md has the figures). Wiped when it outgrows 8 GiB.
  edge_target=${AARCH64_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kerf/target-aarch64}
  mkdir -p "$edge_target"
  if [ "$(du -s "$edge_target" | cut -f1)" -gt $((8 * 1024 * 1024)) ]; then
    echo "test.sh: $edge_target above 8 GiB; starting it afresh" >&2
    rm -rf "$edge_target" && mkdir -p "$edge_target"
  fi
  aarch64_started=$(date +%s)
  aarch64_bin=$(CARGO_TARGET_DIR="$edge_target" packaging/build-static.sh --arch aarch64 | tail -n 1)
  echo "test.sh: aarch64 build took $(( $(date +%s) - aarch64_started )) s" >&2
  under_qemu="$PWD/target/kerf-aarch64-under-qemu"
  printf '#!/bin/sh\nexec qemu-aarch64 %s "$@"\n' "$(realpath "$aarch64_bin")" >"$under_qemu"
  chmod +x "$under_qemu"
  KERF_TEST_BIN="$under_qemu" cargo test --locked --test it -- edge::
fi
