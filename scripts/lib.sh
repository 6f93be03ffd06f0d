#!/usr/bin/env bash
# Shared helpers of scripts/demo, scripts/test and the test parts in
# scripts/test.d/. Sourced, never run.

# Install Debian packages that are missing (as root or through sudo); quiet
# when everything is there. s0_apt_install PKG...
s0_apt_install() {
  local p missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; return 1; }
    sudo="sudo"
  fi
  echo "==> installing: ${missing[*]}"
  if [ -z "${S0_APT_UPDATED:-}" ]; then
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
    export S0_APT_UPDATED=1
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Configure (once) and build a meson tree: s0_build DIR [meson options…]
s0_build() {
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" --wrap-mode=nofallback "$@" || return 1
  fi
  ninja -C "$dir"
}

# A test part's result, for scripts/test's final line:
#   s0_tally NAME PASSED FAILED SKIPPED
# prints "[NAME] N passed, N failed, N skipped" and records it in
# $S0_RESULTS (set by scripts/test).
s0_tally() {
  local name=$1 p=$2 f=$3 s=${4:-0}
  echo "[$name] $p passed, $f failed, $s skipped"
  [ -n "${S0_RESULTS:-}" ] && echo "$p $f $s" > "$S0_RESULTS/$name"
  return 0
}

# Record lines that say what failed, for the summary scripts/test prints
# last (CI shows only the head and tail of a long log):
#   s0_note_failure NAME LINE...   or   ... | s0_note_failure NAME
s0_note_failure() {
  local name=$1; shift
  [ -n "${S0_RESULTS:-}" ] || return 0
  if [ $# -gt 0 ]; then printf '%s\n' "$@"; else cat; fi >> "$S0_RESULTS/$name.failures"
}

# Run meson tests of one or more suites and tally them from meson's log:
#   s0_meson_suites NAME BUILDDIR SUITE... [-- extra meson test args]
s0_meson_suites() {
  local name=$1 dir=$2; shift 2
  local args=() rc=0
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=(--suite "$1"); shift; done
  [ "${1:-}" = -- ] && shift
  meson test -C "$dir" --print-errorlogs --num-processes 2 "${args[@]}" "$@" || rc=1
  # keep this part's log (the next meson test in the same tree replaces testlog.json)
  cp "$dir/meson-logs/testlog.json" "$dir/meson-logs/testlog-$name.json" 2>/dev/null
  cp "$dir/meson-logs/testlog.txt" "$dir/meson-logs/testlog-$name.txt" 2>/dev/null
  local summary counts
  local fails=/dev/null
  [ -n "${S0_RESULTS:-}" ] && fails="$S0_RESULTS/$name.failures"
  summary=$(python3 scripts/summarize_tests.py --tag "$name" --failures "$fails" \
    "$dir/meson-logs/testlog.json") || rc=1
  printf '%s\n' "$summary"
  counts=$(printf '%s\n' "$summary" | tail -1)
  # "N passed, N failed, N skipped"
  set -- $(echo "$counts" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
  s0_tally "$name" "${1:-0}" "${2:-1}" "${3:-0}" >/dev/null
  [ "${2:-1}" = 0 ] || rc=1
  return $rc
}

# A throwaway PostgreSQL cluster (scripts/pg-cluster) in a new temporary
# directory, started; exports S0_TEST_META (a libpq URL over its socket),
# S0_TEST_PG_CTL, S0_TEST_PG_DIR and S0_TEST_PG_PORT. The caller removes it
# with `scripts/pg-cluster destroy "$S0_TEST_PG_DIR"` (parts 47, 49).
s0_pg_up() {
  S0_TEST_PG_DIR=$(mktemp -d /tmp/s0-pg.XXXXXX) || return 1
  S0_TEST_PG_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  S0_TEST_PG_CTL=$PWD/scripts/pg-cluster
  export S0_TEST_META S0_TEST_PG_CTL S0_TEST_PG_DIR S0_TEST_PG_PORT
  scripts/pg-cluster init "$S0_TEST_PG_DIR" "$S0_TEST_PG_PORT" &&
    scripts/pg-cluster start "$S0_TEST_PG_DIR" || return 1
  S0_TEST_META=$(scripts/pg-cluster url "$S0_TEST_PG_DIR")
}

# A throwaway SeaweedFS S3 server (tests/s3server/s3ctl.sh, binary
# $S0_WEED_BIN) in a new temporary directory, started; exports its
# S0_TEST_S3_URL and AWS_* credentials, S0_S3_STATE and S0_TEST_S3_CTL. The
# caller stops it with `tests/s3server/s3ctl.sh "$S0_S3_STATE" stop` and
# removes the directory (parts 48, 49).
s0_s3_up() {
  S0_S3_STATE=$(mktemp -d /tmp/s0-s3.XXXXXX) || return 1
  export S0_WEED_BIN S0_S3_STATE
  tests/s3server/s3ctl.sh "$S0_S3_STATE" init || return 1
  set -a
  . "$S0_S3_STATE/env"
  set +a
  export S0_TEST_S3_CTL="$PWD/tests/s3server/s3ctl.sh $S0_S3_STATE"
  tests/s3server/s3ctl.sh "$S0_S3_STATE" start
}
