# Part "tsan": the C suites whose code runs on several threads (client and
# its transports, waits, object directory, block store and GC, the lifecycle
# engine, memory checkpoints, the simulated guest, the HTTP server) again
# under ThreadSanitizer, in their own build
# tree build-tsan (gcc, -Db_sanitize=thread). Any report fails its test
# (halt_on_error). No suppressions: tests/tsan.supp lists none.
#
# Short run: the client, wait, objects, checkpoint, runtime and server
# programs whole; the block store program and the engine suites that start
# helper threads or run the random model (local-ptx, -rec, -rtx, -ttl,
# -model, -webhook, -damaged) with randomised loops cut to one iteration
# (S0_TEST_ITERATIONS=1). S0_LONG_TESTS=1: every suite of every program at
# its default iteration counts (not the x20 of S0_LONG_TESTS elsewhere).

S0_TSAN_TARGETS="tests/unit/client/unit-client tests/unit/wait/unit-wait
  tests/unit/objects/check_objects tests/unit/blocks/check_blocks tests/unit/blocks/blk_crasher
  tests/unit/server/unit-server tests/unit/local/check_local tests/unit/local/local_crasher
  tests/unit/checkpoint/unit-checkpoint tests/unit/runtime/unit-runtime"

# One check program: s0_tsan_prog TAG PROGRAM [ENV=VALUE...]; adds to p/f.
s0_tsan_prog() {
  local tag=$1 prog=$2; shift 2
  local log="$S0_TSAN_DIR/tsan-logs/$tag.log" t0=$(date +%s)
  # ThreadSanitizer runs 5-15x slower: check's per-test timeouts scale with it.
  env CK_TIMEOUT_MULTIPLIER=10 "$@" TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp" \
    CK_FORK=yes nice "$S0_TSAN_DIR/$prog" > "$log" 2>&1
  local rc=$? line n fl er
  # -a and unanchored: a forked crasher child may leave bytes without a
  # newline just before check's closing line.
  line=$(grep -a -oE '[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -1)
  if [ -n "$line" ]; then
    set -- $(echo "$line" | sed -E 's/.*Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2 \3/')
    n=$1; fl=$(( $2 + $3 ))
  else
    n=1; fl=1
  fi
  [ $rc != 0 ] && [ $fl = 0 ] && fl=1
  S0_TSAN_P=$(( S0_TSAN_P + n - fl )); S0_TSAN_F=$(( S0_TSAN_F + fl ))
  echo "[tsan $tag] ${line:-no closing line (exit $rc)} in $(( $(date +%s) - t0 )) s"
  if [ $fl != 0 ]; then
    { echo "$tag (exit $rc)"
      grep -a -E "WARNING: ThreadSanitizer|SUMMARY: ThreadSanitizer|:[EF]:" "$log" | head -20 | sed 's/^/    /'
      echo "    log: $log"; } | tee /dev/stderr | s0_note_failure tsan
  fi
}

run() {
  S0_TSAN_DIR=build-tsan
  if [ ! -f "$S0_TSAN_DIR/build.ninja" ]; then
    meson setup "$S0_TSAN_DIR" --wrap-mode=nofallback -Db_sanitize=thread \
      -Dbench=false -Dpython=disabled || { s0_tally tsan 0 1 0; return 1; }
  fi
  ninja -C "$S0_TSAN_DIR" $S0_TSAN_TARGETS || { s0_tally tsan 0 1 0; return 1; }
  mkdir -p "$S0_TSAN_DIR/tsan-logs"
  S0_TSAN_P=0 S0_TSAN_F=0
  local b=$S0_TSAN_DIR/tests/unit
  s0_tsan_prog client tests/unit/client/unit-client S0_LONG_TESTS=0
  s0_tsan_prog wait tests/unit/wait/unit-wait S0_LONG_TESTS=0
  s0_tsan_prog objects tests/unit/objects/check_objects S0_LONG_TESTS=0
  s0_tsan_prog server tests/unit/server/unit-server S0_LONG_TESTS=0
  s0_tsan_prog checkpoint tests/unit/checkpoint/unit-checkpoint S0_LONG_TESTS=0
  s0_tsan_prog runtime tests/unit/runtime/unit-runtime S0_LONG_TESTS=0
  if [ "${S0_LONG_TESTS:-0}" = 1 ]; then
    s0_tsan_prog blocks tests/unit/blocks/check_blocks S0_LONG_TESTS=0 \
      S0_BLK_CRASHER="$PWD/$b/blocks/blk_crasher"
    s0_tsan_prog local tests/unit/local/check_local S0_LONG_TESTS=0 \
      S0_LOCAL_CRASHER="$PWD/$b/local/local_crasher"
  else
    s0_tsan_prog blocks tests/unit/blocks/check_blocks S0_TEST_ITERATIONS=1 \
      S0_BLK_CRASHER="$PWD/$b/blocks/blk_crasher"
    local s
    for s in local-ptx local-rec local-rtx local-ttl local-model local-webhook local-damaged; do
      s0_tsan_prog "$s" tests/unit/local/check_local S0_TEST_ITERATIONS=1 CK_RUN_SUITE=$s \
        S0_LOCAL_CRASHER="$PWD/$b/local/local_crasher"
    done
  fi
  s0_tally tsan "$S0_TSAN_P" "$S0_TSAN_F" 0
  [ "$S0_TSAN_F" = 0 ]
}
