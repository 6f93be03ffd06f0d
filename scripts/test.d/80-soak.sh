# Part "soak": the soak programs of tests/soak on the ordinary build (no
# sanitizer, so RSS figures mean something). router_rss: RSS of one engine
# over 100,000 router requests (S0_LONG_TESTS=1: 600,000), RSS after the
# total under 64 MiB and growth since the first checkpoint under 16 MiB.
run() {
  local p=0 f=0
  if [ "${S0_LONG_TESTS:-0}" = 1 ]; then
    set -- 100000 600000
  else
    set -- 20000 100000
  fi
  if nice build/tests/soak/router_rss "$1" "$2" 64 16; then p=$((p+1)); else f=$((f+1)); fi
  s0_tally soak "$p" "$f" 0
  [ "$f" = 0 ]
}
