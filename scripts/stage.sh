# Sourced by scripts/test.sh and .ci/run: `stage NAME CMD...` runs CMD, prints how long it
# took, and keeps the figure for the summary `stage_summary` prints at the end (and at a
# failure), so every run says where its time went.
STAGE_TIMES=${STAGE_TIMES:-}
stage() {
  local name=$1 started rc
  shift
  echo "== stage $name" >&2
  started=$(date +%s)
  set +e
  "$@"
  rc=$?
  set -e
  local took=$(( $(date +%s) - started ))
  STAGE_TIMES="${STAGE_TIMES}${name}=${took}s "
  echo "== stage $name: ${took} s$([ "$rc" = 0 ] || echo " (FAILED, exit $rc)")" >&2
  return "$rc"
}
stage_summary() {
  echo "== stage times: ${STAGE_TIMES}" >&2
}

# `tool_start NAME CMD...` runs CMD in the background (in its own process group), its
# stdout and stderr kept in files, so a long cached build runs beside other stages;
# `tool_wait NAME` waits for it, shows its log and returns its exit status (a stage of
# its own, so the summary says how long the tests waited); `tool_result NAME` prints its
# stdout's last line; `tool_stop` ends those still running (at exit).
declare -A TOOL_PIDS=()
TOOL_DIR=""
tool_start() {
  local name=$1
  shift
  [ -n "$TOOL_DIR" ] || TOOL_DIR=$(mktemp -d)
  setsid "$@" >"$TOOL_DIR/$name.out" 2>"$TOOL_DIR/$name.log" </dev/null &
  TOOL_PIDS[$name]=$!
}
tool_wait() {
  local name=$1 rc=0
  wait "${TOOL_PIDS[$name]}" || rc=$?
  unset "TOOL_PIDS[$name]"
  cat "$TOOL_DIR/$name.log" >&2
  [ "$rc" = 0 ] || echo "== $name FAILED (exit $rc); its log is above" >&2
  return "$rc"
}
tool_result() {
  tail -n 1 "$TOOL_DIR/$1.out"
}
tool_stop() {
  local pid
  for pid in "${TOOL_PIDS[@]}"; do
    kill -- "-$pid" 2>/dev/null || true
  done
  [ -z "$TOOL_DIR" ] || rm -rf "$TOOL_DIR"
}
