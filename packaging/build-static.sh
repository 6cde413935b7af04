#!/usr/bin/env bash
# Builds a fully static binary of kerf in the dist profile (Cargo.toml: release with
# whole-program LTO and one codegen unit, the binary kerf ships) and proves it is static.
#
#   packaging/build-static.sh [--arch x86_64|aarch64] [extra cargo args]
#
# x86_64 (the default): musl first (the rustup target and musl-tools, installed here when
# missing), else glibc with crt-static.
# aarch64 (edge hardware: Raspberry Pi 4/5, Graviton, Ampere): the rustup target
# aarch64-unknown-linux-musl, whose Rust standard library brings its own musl, linked by
# Debian's cross compiler gcc-aarch64-linux-gnu (installed here when missing), which also
# compiles the C inside (SQLite, ring); else glibc with crt-static through the same
# cross compiler. `scripts/test.sh` runs the result under qemu-user.
# Prints the path of the binary on stdout's last line.
set -euo pipefail
cd "$(dirname "$0")/.."

arch=x86_64
if [ "${1:-}" = "--arch" ]; then
  arch=${2:?--arch needs x86_64 or aarch64}
  shift 2
fi
case "$arch" in
  x86_64 | aarch64) ;;
  *) echo "build-static: unknown --arch $arch (x86_64 or aarch64)" >&2; exit 2 ;;
esac

log() { echo "build-static: $*" >&2; }

apt_install() {
  log "installing $*"
  { apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@"; } >&2
}

ensure_target() {
  if ! rustup target list --installed 2>/dev/null | grep -qx "$1"; then
    log "adding rustup target $1"
    rustup target add "$1" >&2 || return 1
  fi
}

ensure_musl_x86_64() {
  ensure_target x86_64-unknown-linux-musl || return 1
  if ! command -v x86_64-linux-musl-gcc >/dev/null && ! command -v musl-gcc >/dev/null; then
    apt_install musl-tools || return 1
  fi
  command -v x86_64-linux-musl-gcc >/dev/null || export CC_x86_64_unknown_linux_musl=musl-gcc
}

ensure_cross_aarch64() {
  command -v aarch64-linux-gnu-gcc >/dev/null || apt_install gcc-aarch64-linux-gnu || return 1
  # The cross compiler carries glibc's headers, which turn SQLite's large-file calls
  # into open64/stat64/… — symbols musl (1.2.4 on) no longer has. On a 64-bit target
  # off_t is 64 bits anyway, so SQLite's LFS switch changes nothing but the names.
  export LIBSQLITE3_FLAGS="${LIBSQLITE3_FLAGS:-} -DSQLITE_DISABLE_LFS"
  export CC_aarch64_unknown_linux_musl=aarch64-linux-gnu-gcc \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=aarch64-linux-gnu-gcc \
    CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
}

is_static() {
  local bin=$1 machine
  file "$bin" | grep -Eq 'static(-pie)? linked|statically linked' || return 1
  machine=$([ "$arch" = aarch64 ] && echo 'ARM aarch64' || echo 'x86-64')
  file "$bin" | grep -q "$machine" || { log "$bin is not an $arch binary"; return 1; }
  # ldd only judges binaries of this machine's CPU.
  if [ "$arch" = "$(uname -m)" ] && ldd "$bin" >/dev/null 2>&1; then
    ldd "$bin" 2>&1 | grep -q 'not a dynamic executable\|statically linked' || return 1
  fi
  return 0
}

target_dir=${CARGO_TARGET_DIR:-target}
out=""
musl=$arch-unknown-linux-musl
gnu=$arch-unknown-linux-gnu
if [ "$arch" = aarch64 ]; then
  ensure_cross_aarch64 || { log "FAILED: no aarch64 cross compiler"; exit 1; }
  ready_musl() { ensure_target "$musl"; }
else
  ready_musl() { ensure_musl_x86_64; }
fi
if ready_musl; then
  log "building for $musl"
  # A build that fails here fails: falling back would only build everything again
  # for glibc to meet the same error.
  # On x86_64, RELR packs the relative relocations of the position-independent binary
  # (musl's start code applies them, since musl 1.2.4): 24.2 MB instead of 25.2.
  # Passed to the final link only (`cargo rustc`), so no dependency is built again for
  # it. aarch64 links without it until a build proves it there under qemu.
  relr=()
  [ "$arch" = x86_64 ] && relr=(-C link-arg=-Wl,-z,pack-relative-relocs)
  cargo rustc --profile dist --locked --target "$musl" --bin kerf "$@" -- "${relr[@]}" >&2
  out=$target_dir/$musl/dist/kerf
  method=musl
fi
if [ -z "$out" ]; then
  log "musl unavailable; building glibc with crt-static for $gnu"
  [ "$arch" = aarch64 ] && ensure_target "$gnu"
  RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --profile dist --locked --target "$gnu" "$@" >&2
  out=$target_dir/$gnu/dist/kerf
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
