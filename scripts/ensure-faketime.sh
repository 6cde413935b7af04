#!/usr/bin/env bash
# Installs Debian's faketime when missing: the run_prometheus benchmark runs the real
# `kerf serve` with its clock at the benchmark data's window end (libfaketime preload).
set -euo pipefail
if [ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ]; then
  exit 0
fi
echo "ensure-faketime: installing Debian's faketime package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
apt-get -o DPkg::Lock::Timeout=600 install -y -qq faketime >&2
