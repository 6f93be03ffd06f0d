# Part "c": the check suites of every C component, the header compile tests,
# the CLI goldens (meson suite `unit`).
run() {
  s0_meson_suites c build unit
}
