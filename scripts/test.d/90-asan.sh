# Part "asan": the C suites (and the carrier suite, as root) again under AddressSanitizer +
# UndefinedBehaviorSanitizer
# (S0_SKIP_ASAN=1 skips it).
run() {
  if [ "${S0_SKIP_ASAN:-0}" = 1 ]; then
    echo "S0_SKIP_ASAN=1: sanitizer part skipped"; s0_tally asan 0 0 1; return 0
  fi
  s0_build build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbench=false -Dpython=disabled || return 1
  # the sanitizers run 2-4x slower: check's per-test timeouts scale with them
  CK_TIMEOUT_MULTIPLIER=4 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    s0_meson_suites asan build-asan unit carrier
}
