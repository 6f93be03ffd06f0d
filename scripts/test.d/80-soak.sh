# Part "soak": the soak programs of tests/soak on the ordinary build (no
# sanitizer, so RSS figures mean something), fixed seeds:
#  - router_rss: RSS of one engine over 100,000 router requests
#    (S0_LONG_TESTS=1: 600,000); RSS after the total under 64 MiB and growth
#    since the first checkpoint under 16 MiB;
#  - lifecycle_soak: 8 workers x 10 cycles of claim/write/pause/resume/read/
#    delete against `s0 serve` (long: 8 x 1,000), every byte checked, server
#    RSS and open files must not grow;
#  - lifecycle_soak crash loop: 4 workers x 20 cycles while s0 serve is
#    SIGKILLed and restarted 3 times (long: 8 x 200 with 30 kills).
run() {
  local p=0 f=0 s0=build/libsandbox0/cli/s0 soak=build/tests/soak
  local rss life crash
  if [ "${S0_LONG_TESTS:-0}" = 1 ]; then
    rss="100000 600000"; life="8 1000"; crash="8 200 3 30"
  else
    rss="20000 100000"; life="8 10"; crash="4 20 7 3"
  fi
  if nice $soak/router_rss $rss 64 16; then p=$((p+1)); else f=$((f+1)); fi
  if nice $soak/lifecycle_soak $s0 $life 1; then p=$((p+1)); else f=$((f+1)); fi
  if nice $soak/lifecycle_soak $s0 $crash; then p=$((p+1)); else f=$((f+1)); fi
  s0_tally soak "$p" "$f" 0
  [ "$f" = 0 ]
}
