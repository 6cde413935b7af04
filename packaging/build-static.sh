#!/usr/bin/env bash
# Builds a fully static release binary of kerf and proves it is static.
# Tries musl first (needs the rustup target and musl-tools, installed here when missing),
# then falls back to glibc with crt-static. Prints the path of the binary on stdout's
# last line. Usage: packaging/build-static.sh [extra cargo args]
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "build-static: $*" >&2; }

ensure_musl() {
  if ! rustup target list --installed 2>/dev/null | grep -qx x86_64-unknown-linux-musl; then
    log "adding rustup target x86_64-unknown-linux-musl"
    rustup target add x86_64-unknown-linux-musl >&2 || return 1
  fi
  if ! command -v x86_64-linux-musl-gcc >/dev/null && ! command -v musl-gcc >/dev/null; then
    log "installing musl-tools"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools; } >&2 || return 1
  fi
  command -v x86_64-linux-musl-gcc >/dev/null || export CC_x86_64_unknown_linux_musl=musl-gcc
}

is_static() {
  local bin=$1
  file "$bin" | grep -Eq 'static(-pie)? linked|statically linked' || return 1
  if ldd "$bin" >/dev/null 2>&1; then
    ldd "$bin" 2>&1 | grep -q 'not a dynamic executable\|statically linked' || return 1
  fi
  return 0
}

out=""
if ensure_musl; then
  log "building for x86_64-unknown-linux-musl"
  if cargo build --release --locked --target x86_64-unknown-linux-musl "$@" >&2; then
    out=target/x86_64-unknown-linux-musl/release/kerf
    method=musl
  fi
fi
if [ -z "$out" ]; then
  log "musl unavailable; building glibc with crt-static"
  RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release --locked --target x86_64-unknown-linux-gnu "$@" >&2
  out=target/x86_64-unknown-linux-gnu/release/kerf
  method=glibc-crt-static
fi

if ! is_static "$out"; then
  log "FAILED: $out is dynamically linked:"
  file "$out" >&2
  ldd "$out" >&2 || true
  exit 1
fi
log "static binary ($method): $(file -b "$out")"
log "size: $(du -h "$out" | cut -f1)"
echo "$out"
