#!/usr/bin/env bash
# A cargo target dir kept in the cache (~/.cache/kerf/target-NAME), like the control
# plane: CI clones the repository afresh each run, and a cold build of every dependency
# costs minutes per profile and target on 2 cores, while cargo's fingerprints rebuild
# exactly what changed, so later runs on a machine pay for kerf alone. Wiped when it
# outgrows CAP_GIB (8 unless given), as dependency bumps leave old artefacts behind.
#   scripts/ensure-target-cache.sh NAME [CAP_GIB]
# Prints the directory on its last line.
set -euo pipefail
name=${1:?usage: ensure-target-cache.sh NAME [CAP_GIB]}
cap_gib=${2:-8}
dir=${XDG_CACHE_HOME:-$HOME/.cache}/kerf/target-$name
mkdir -p "$dir"
if [ "$(du -s "$dir" | cut -f1)" -gt $((cap_gib * 1024 * 1024)) ]; then
  echo "ensure-target-cache: $dir above $cap_gib GiB; starting it afresh" >&2
  rm -rf "$dir" && mkdir -p "$dir"
fi
echo "$dir"
