#!/usr/bin/env bash
# Python tools the test suite runs against the served API document, in a venv of their
# own (pinned from PyPI): openapi-spec-validator, a real OpenAPI 3.1 validator, and
# schemathesis, which fuzzes a running hub from the document it serves.
# Prints the venv's bin directory on its last line. Idempotent and quick when present.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${KERF_PYTOOLS:-$PWD/target/pytools}"
want="openapi-spec-validator==0.9.0 schemathesis==4.32.5"
stamp="$venv/.installed"
if [ -x "$venv/bin/openapi-spec-validator" ] && [ -x "$venv/bin/schemathesis" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$venv/bin"
  exit 0
fi
if ! command -v python3 >/dev/null; then
  echo "ensure-python-tools: installing python3" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >&2
fi
if ! python3 -m venv --help >/dev/null 2>&1; then
  echo "ensure-python-tools: installing python3-venv" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
fi
echo "ensure-python-tools: creating $venv with $want" >&2
rm -rf "$venv"
python3 -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check $want >&2
echo "$want" > "$stamp"
echo "$venv/bin"
