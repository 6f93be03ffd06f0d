# Part "postgres": the metadata store on a real PostgreSQL server
# (libsandbox0/local/meta/postgres/, docs/postgres.md). A throwaway cluster
# (scripts/pg-cluster: Debian's server binaries, initdb as `nobody`, a unix
# socket in a temporary directory and 127.0.0.1 on a free port) serves:
#  - unit-meta-postgres: the metadata contract suite over every registered
#    implementation, PostgreSQL included;
#  - unit-local-postgres: the lifecycle suites (the list unit-local runs on
#    SQLite, crash tests included: each test its own database) with the
#    metadata on PostgreSQL; the count per backend is printed and must equal
#    the SQLite run's;
#  - postgres-server (alone, it stops the server): outages of the server
#    before and after a pause's intent and during a resume, an immediate
#    stop, passwords, URLs, migrations.
# The cluster is stopped and removed on every path.
deps() {
  # Debian's package creates and starts its own cluster; one that was not
  # running before the install is stopped again (ours runs in a temp dir)
  local before=""
  command -v pg_lsclusters >/dev/null && before=$(pg_lsclusters -h 2>/dev/null | awk '$4 == "online" { print $1 "/" $2 }')
  s0_apt_install postgresql libpq-dev || return 1
  local v c st
  pg_lsclusters -h 2>/dev/null | while read -r v c _ st _; do
    [ "$st" = online ] || continue
    case " $before " in *" $v/$c "*) continue ;; esac
    echo "==> stopping the cluster $v/$c the package started"
    pg_ctlcluster "$v" "$c" stop || true
  done
}

# The checks count of meson test NAME in a testlog json (empty when absent).
s0_pg_checks() {
  python3 - "$1" "$2" <<'PY'
import json, re, sys
name, path = sys.argv[1], sys.argv[2]
try:
    for line in open(path):
        t = json.loads(line)
        n = t.get("name") or ""
        if n == name or n.endswith(" / " + name):
            m = re.findall(r"Checks: (\d+)", (t.get("stdout") or "") + (t.get("stderr") or ""))
            print(m[-1] if m else "")
except OSError:
    pass
PY
}

run() {
  local rc=0
  trap '[ -n "${S0_TEST_PG_DIR:-}" ] && scripts/pg-cluster destroy "$S0_TEST_PG_DIR"' EXIT
  trap 'exit 1' INT TERM
  if ! s0_pg_up; then
    s0_tally postgres 0 1 0
    return 1
  fi
  # the SQLite count to compare with: part c's log of this run, else run it
  local sq_log=build/meson-logs/testlog-c.json suites=(unit-local-postgres unit-meta-postgres)
  # (only a log newer than the lifecycle suites' binary counts: an older one may be of other tests)
  if [ -z "$(s0_pg_checks unit-local "$sq_log")" ] || [ "$sq_log" -ot build/tests/unit/local/check_local ]; then
    sq_log=build/meson-logs/testlog-postgres.json
    suites+=(unit-local)
  fi
  nice meson test -C build --print-errorlogs --num-processes 2 "${suites[@]}" || rc=1
  cp build/meson-logs/testlog.json build/meson-logs/testlog-postgres.json
  nice meson test -C build --print-errorlogs postgres-server || rc=1
  cp build/meson-logs/testlog.json build/meson-logs/testlog-postgres-server.json
  local pg sq
  pg=$(s0_pg_checks unit-local-postgres build/meson-logs/testlog-postgres.json)
  sq=$(s0_pg_checks unit-local "$sq_log")
  echo "==> lifecycle checks per backend: sqlite ${sq:-?}, postgres ${pg:-?}"
  if [ -z "$pg" ] || [ "$pg" != "$sq" ]; then
    echo "the PostgreSQL run's count differs from the SQLite run's" >&2
    rc=1
  fi
  local summary counts
  summary=$(python3 scripts/summarize_tests.py --tag postgres build/meson-logs/testlog-postgres.json \
    build/meson-logs/testlog-postgres-server.json) || rc=1
  printf '%s\n' "$summary"
  counts=$(printf '%s\n' "$summary" | tail -1)
  set -- $(echo "$counts" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
  local failed=${2:-1}
  [ "$rc" = 0 ] || [ "$failed" != 0 ] || failed=1
  s0_tally postgres "${1:-0}" "$failed" "${3:-0}"
  [ "$rc" = 0 ]
}
