#!/usr/bin/env bash
# Run bench_objects in one go: a throwaway SeaweedFS (tests/s3server/s3ctl.sh)
# and a throwaway PostgreSQL cluster (scripts/pg-cluster) in a temp dir, one
# empty database per repetition, then SQLite + the directory store against
# PostgreSQL + S3. Both servers are stopped and the dir removed on exit.
#
#   bench/objects/run.sh [BUILD_DIR] [bench_objects options...]
#   (S0_WEED_BIN: the SeaweedFS binary; `scripts/test s3` builds it)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
: "${S0_WEED_BIN:=$(ls /var/cache/libsandbox0/seaweedfs/*/weed 2>/dev/null | head -1)}"
export S0_WEED_BIN
st=$(mktemp -d /tmp/s0-bench-objects.XXXXXX)
[ "$(id -u)" = 0 ] && chmod 755 "$st"
cleanup() {
  "$root/tests/s3server/s3ctl.sh" "$st/s3" stop || true
  "$root/scripts/pg-cluster" destroy "$st/pg" || true
  rm -rf "$st"
}
trap cleanup EXIT
"$root/tests/s3server/s3ctl.sh" "$st/s3" init
"$root/tests/s3server/s3ctl.sh" "$st/s3" start
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$root/scripts/pg-cluster" init "$st/pg" "$port"
"$root/scripts/pg-cluster" start "$st/pg"
url=$("$root/scripts/pg-cluster" url "$st/pg")
reps=5 prev=
for a in "$@"; do [ "$prev" = --reps ] && reps=$a; prev=$a; done
for i in $(seq 0 $((reps - 1))); do psql -q "$url" -c "CREATE DATABASE bench$i" >/dev/null; done
set -a; . "$st/s3/env"; set +a
# the server's own floor: the same 16 MiB in one PUT by curl (SigV4, unsigned payload)
head -c 16777216 /dev/urandom >"$st/16m"
ep=$(sed 's/.*endpoint=\([^&]*\).*/\1/' <<<"$S0_TEST_S3_URL")
curl -s -o /dev/null --aws-sigv4 aws:amz:us-east-1:s3 -u "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
  -X PUT "$ep/s0test" || true
for i in 1 2 3; do
  curl -s -o /dev/null -w 'curl: one PUT of 16 MiB to this server: %{time_total} s\n' \
    --aws-sigv4 aws:amz:us-east-1:s3 -u "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' --expect100-timeout 0 -T "$st/16m" "$ep/s0test/floor$i"
done
rm -f "$st/16m"
"$build/bench/objects/bench_objects" --meta "$("$root/scripts/pg-cluster" url "$st/pg" 'bench{rep}')" \
  "$@" "$S0_TEST_S3_URL" "$st"
