#!/usr/bin/env bash
# Installs Debian's victoria-metrics when missing: the protocol-fallback test reads a
# real server that refuses Prometheus remote read.
set -euo pipefail
if command -v victoria-metrics >/dev/null; then
  exit 0
fi
echo "ensure-victoria-metrics: installing Debian's victoria-metrics package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
apt-get -o DPkg::Lock::Timeout=600 install -y -qq victoria-metrics >&2
# The package may start a system service on 8428; the tests start their own.
(systemctl stop victoria-metrics 2>/dev/null || service victoria-metrics stop 2>/dev/null || true) >&2
