#!/usr/bin/env bash
# Start a throwaway PostgreSQL and SeaweedFS (the helpers of test parts 47
# and 48, scripts/lib.sh), run bench_nodes.py with the given options against
# build/libsandbox0/cli/s0, then stop and remove both. Needs what part
# `nodes` installs (scripts/test nodes, or its deps).
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
S0_WEED_BIN=$(. scripts/test.d/48-s3.sh && echo "$S0_WEED_BIN")
trap '[ -n "${S0_TEST_PG_DIR:-}" ] && scripts/pg-cluster destroy "$S0_TEST_PG_DIR";
      [ -n "${S0_S3_STATE:-}" ] && { tests/s3server/s3ctl.sh "$S0_S3_STATE" stop; rm -rf "$S0_S3_STATE"; }' EXIT
s0_pg_up >/dev/null && s0_s3_up >/dev/null || exit 1
export S0_TEST_PG_ADMIN=$S0_TEST_META S0_CLI=$PWD/build/libsandbox0/cli/s0
python3 bench/nodes/bench_nodes.py "$@"
