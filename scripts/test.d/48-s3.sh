# Part "s3": the object store on a real S3 server. SeaweedFS, built from the
# Go module proxy at the version tests/s3server/go.mod pins (binary cached in
# /var/cache/libsandbox0/seaweedfs/<version>/, built once), runs on loopback
# with authentication on (tests/s3server/s3ctl.sh), and the meson suite "s3"
# runs against it:
#   objects-s3          the object-store contract suite and the S3 backend's
#                       own tests (wrong secret, damage, cache bound, ...)
#   blocks-s3           the block-store suites, crash points included
#   unit-local-s3       the lifecycle suites (the same list as unit-local and
#                       unit-local-files), crash tests included
#   serve-s3            s0 serve --objects: a wrong secret stops it clearly, it
#                       pauses and resumes on S3, no credential in its output
#   unit-local-s3-outage the server stopped mid-pause and mid-resume, then
#                       restarted (run alone: it stops the shared server)
# The count of lifecycle tests per backend is printed; they must be equal.
# The server is stopped and its directory removed on every path.

S0_WEED_VERSION=v0.0.0-20261109003541-7506e5f91cd6
S0_WEED_BIN=/var/cache/libsandbox0/seaweedfs/$S0_WEED_VERSION/weed

deps() {
  s0_apt_install libxml2-dev curl python3 || return 1
  [ -x "$S0_WEED_BIN" ] && return 0
  # Go as part "go" installs it (Debian 12's own is too old); the go line of
  # tests/s3server/go.mod makes an older go fetch that toolchain from the
  # Go module proxy
  command -v go >/dev/null || (. scripts/test.d/40-go.sh && deps) || return 1
  local dir tmp
  dir=$(dirname "$S0_WEED_BIN")
  mkdir -p "$dir" || return 1
  tmp=$(mktemp "$dir/weed.XXXXXX") || return 1
  echo "==> building SeaweedFS $S0_WEED_VERSION (tests/s3server, once)"
  if (cd tests/s3server && nice go build -trimpath -o "$tmp" .); then
    mv "$tmp" "$S0_WEED_BIN"
  else
    rm -f "$tmp"
    return 1
  fi
}

# Checks of one meson test (by its short name) in a testlog JSON; empty
# when the log or the test is not there.
s0_s3_count() {
  [ -f "$1" ] || return 0
  python3 - "$1" "$2" <<'PY'
import json, re, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t.get("name", "").split(" / ")[-1] == sys.argv[2]:
        m = re.findall(r"(\d+)%: Checks: (\d+)", t.get("stdout", ""))
        print(m[-1][1] if m else 0)
PY
}

run() {
  S0_S3_STATE=$(mktemp -d /tmp/s0-s3.XXXXXX)
  export S0_WEED_BIN
  trap 'tests/s3server/s3ctl.sh "$S0_S3_STATE" stop; rm -rf "$S0_S3_STATE"' EXIT
  tests/s3server/s3ctl.sh "$S0_S3_STATE" init || return 1
  set -a
  . "$S0_S3_STATE/env"
  set +a
  export S0_TEST_S3_CTL="$PWD/tests/s3server/s3ctl.sh $S0_S3_STATE"
  if ! tests/s3server/s3ctl.sh "$S0_S3_STATE" start; then
    s0_tally s3 0 1 0
    return 1
  fi
  local rc=0
  s0_meson_suites s3 build s3 || rc=1
  # the lifecycle list per backend: the same binary and suites, so equal
  # counts; pack and files come from part c's log when it ran
  local pack= files= s3=
  s3=$(s0_s3_count build/meson-logs/testlog-s3.json unit-local-s3)
  # (only a log newer than the lifecycle suites' binary: an older one is of other tests)
  if [ build/meson-logs/testlog-c.json -nt build/tests/unit/local/check_local ]; then
    pack=$(s0_s3_count build/meson-logs/testlog-c.json unit-local)
    files=$(s0_s3_count build/meson-logs/testlog-c.json unit-local-files)
  fi
  echo "lifecycle tests per object store: pack ${pack:-(part c not run)}, files ${files:-(part c not run)}, s3 ${s3:-0}"
  if [ "${s3:-0}" = 0 ] || { [ -n "$pack" ] && [ "$pack" != "$s3" ]; } ||
     { [ -n "$files" ] && [ "$files" != "$s3" ]; }; then
    echo "[s3] the lifecycle counts differ between object stores" >&2
    [ -n "${S0_RESULTS:-}" ] && read -r a b c <"$S0_RESULTS/s3" && s0_tally s3 "$a" $((b + 1)) "$c"
    rc=1
  fi
  return $rc
}
