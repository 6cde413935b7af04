#!/usr/bin/env bash
# Installs Debian's python3-aiosmtpd when missing: the notification tests submit email
# to a real SMTP server on loopback (tests/it/support/smtp_server.py), run by Debian's
# /usr/bin/python3 so another Python on PATH does not matter.
set -euo pipefail
if /usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null; then
  exit 0
fi
echo "ensure-smtp: installing Debian's python3-aiosmtpd package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
apt-get -o DPkg::Lock::Timeout=600 install -y -qq python3-aiosmtpd >&2
