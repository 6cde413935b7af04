#!/usr/bin/env bash
# Installs Debian's prometheus (server + promtool) when missing: the datasource
# integration tests and the collect benchmark run against the real thing.
set -euo pipefail
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
  exit 0
fi
echo "ensure-prometheus: installing Debian's prometheus package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
apt-get -o DPkg::Lock::Timeout=600 install -y -qq prometheus >&2
# The package starts a system service on 9090; the tests start their own on free ports.
(systemctl stop prometheus 2>/dev/null || service prometheus stop 2>/dev/null || true) >&2
