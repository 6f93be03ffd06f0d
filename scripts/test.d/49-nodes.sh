# Part "nodes": several `s0 serve` nodes on one real PostgreSQL (a throwaway
# cluster, scripts/pg-cluster) and one real S3 server (SeaweedFS,
# tests/s3server), on the simulated runtime: node identity and the node
# channel, any node serving any call, pause on one node and resume on
# another, concurrent pauses and resumes through different nodes, nodes
# killed with SIGKILL mid-pause and mid-resume, a stalled node, PostgreSQL and S3 outages,
# the lease thread, its watchdog and the fencing check, long-polls woken across nodes, and
# one cross-node pause/resume on the gVisor runtime when run as root
# (tests/nodes/test_nodes.py, behaviours NOD-01..NOD-16). Both servers are
# started with the helpers of parts 47 and 48 (scripts/lib.sh) and stopped and
# removed on every path.

deps() {
  (. scripts/test.d/47-postgres.sh && deps) || return 1
  (. scripts/test.d/48-s3.sh && deps) || return 1
  # the gVisor case (NOD-16): the pinned runsc, built once into its cache
  if [ "$(id -u)" = 0 ]; then scripts/install-runsc.sh || return 1; fi
}

run() {
  S0_WEED_BIN=$(. scripts/test.d/48-s3.sh && echo "$S0_WEED_BIN")
  trap '[ -n "${S0_TEST_PG_DIR:-}" ] && scripts/pg-cluster destroy "$S0_TEST_PG_DIR";
        [ -n "${S0_S3_STATE:-}" ] && { tests/s3server/s3ctl.sh "$S0_S3_STATE" stop; rm -rf "$S0_S3_STATE"; }' EXIT
  trap 'exit 1' INT TERM
  if ! s0_pg_up || ! s0_s3_up; then
    s0_tally nodes 0 1 0
    return 1
  fi
  export S0_TEST_PG_ADMIN=$S0_TEST_META S0_CLI=$PWD/build/libsandbox0/cli/s0
  local out rc=0
  out=$(mktemp /tmp/s0-nodes-out.XXXXXX)
  nice python3 tests/nodes/test_nodes.py 2>&1 | tee "$out"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  set -- $(sed -nE 's/^nodes: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$out")
  rm -f "$out"
  local failed=${2:-1}
  [ "$rc" = 0 ] || [ "$failed" != 0 ] || failed=1
  s0_tally nodes "${1:-0}" "$failed" 0
  [ "$rc" = 0 ]
}
