# Part "python": the Python package (SWIG + pure Python) and its examples
# (meson suite `bindings`, built when python3-dev and swig are there).
run() {
  if ! meson introspect --tests build | grep -q '"name": *"python"'; then
    echo "python suite not configured (python3-dev/swig missing?)" >&2
    s0_tally python 0 1 0; return 1
  fi
  s0_meson_suites python build bindings
}
