# Part "python-wheel": the Python package as a user installs it (issue #19).
# The C library is built in a fresh build dir and installed under a temporary
# prefix; `pip wheel bindings/python` builds the package against it through
# pkg-config (meson-python, meson and ninja pinned in pyproject.toml, from
# PyPI, in pip's isolated build env); the wheel goes into a fresh venv of
# Debian's /usr/bin/python3 with pytest (pinned by the package's `test`
# extra), and bindings/python/tests run there on a copy outside the tree, so
# `import libsandbox0` can only be the installed package. The extension finds
# libsandbox0.so through the RUNPATH meson records for a library outside the
# system directories (checked below), not through LD_LIBRARY_PATH. The
# prefix, the build dirs, the venv and pip's cache live in one temporary
# directory removed on every path.
deps() {
  s0_apt_install python3-venv python3-dev swig pkg-config
}

s0_pywheel_cleanup() {
  [ -n "${S0_PYWHEEL_TMP:-}" ] && rm -rf "$S0_PYWHEEL_TMP"
  S0_PYWHEEL_TMP=
}

# The steps; the caller tallies and cleans up. Leaves pytest's output in
# $S0_PYWHEEL_TMP/pytest.log.
s0_pywheel_steps() {
  local t=$S0_PYWHEEL_TMP src=$PWD
  local py=/usr/bin/python3
  echo "==> libsandbox0 installed under $t/prefix (fresh build dir)"
  nice meson setup "$t/build" --prefix="$t/prefix" --libdir=lib --wrap-mode=nofallback \
    -Dtests=false -Dbench=false -Dpython=disabled > "$t/setup.log" 2>&1 ||
    { tail -30 "$t/setup.log" >&2; return 1; }
  nice ninja -C "$t/build" > "$t/ninja.log" 2>&1 || { tail -30 "$t/ninja.log" >&2; return 1; }
  meson install -C "$t/build" --no-rebuild --quiet > "$t/install.log" 2>&1 ||
    { tail -30 "$t/install.log" >&2; return 1; }

  echo "==> venv ($py) and wheel (pip wheel bindings/python, PKG_CONFIG_PATH=$t/prefix/lib/pkgconfig)"
  "$py" -m venv "$t/venv" || return 1
  local pip=("$t/venv/bin/python" -m pip --disable-pip-version-check --no-input)
  export PIP_CACHE_DIR="$t/pip-cache"
  PKG_CONFIG_PATH="$t/prefix/lib/pkgconfig" nice "${pip[@]}" wheel --no-deps -w "$t/dist" \
    --config-settings=build-dir="$t/pybuild" "$src/bindings/python" > "$t/wheel.log" 2>&1 ||
    { tail -40 "$t/wheel.log" >&2; return 1; }
  local whl
  whl=$(ls "$t"/dist/libsandbox0-*.whl) || return 1
  echo "    built $(basename "$whl")"
  "${pip[@]}" install -q "$whl[test]" || return 1

  # The installed package is the one imported, and its extension loads the
  # library installed under the prefix.
  local where
  where=$(cd "$t" && env -u PYTHONPATH "$t/venv/bin/python" -c \
    'import libsandbox0, os; print(os.path.dirname(libsandbox0.capi.__file__))') || return 1
  case "$where" in "$t/venv/"*) ;; *) echo "libsandbox0 imported from $where" >&2; return 1 ;; esac
  readelf -d "$where"/_capi.*.so | grep -q "R.*PATH.*\[$t/prefix/lib\]" ||
    { echo "the extension has no RUNPATH $t/prefix/lib" >&2; return 1; }
  echo "    imported from $where; _capi RUNPATH $t/prefix/lib"

  echo "==> bindings/python/tests on the installed package"
  cp -r "$src/bindings/python/tests" "$t/tests" || return 1
  (cd "$t/tests" && env -u PYTHONPATH PYTHONDONTWRITEBYTECODE=1 \
     S0_PY_EXAMPLES="$src/examples/python" \
     nice "$t/venv/bin/python" -m pytest -v -rs -p no:cacheprovider "$t/tests") 2>&1 |
    tee "$t/pytest.log"
  return "${PIPESTATUS[0]}"
}

run() {
  S0_PYWHEEL_TMP=$(mktemp -d /tmp/s0-pywheel.XXXXXX) || { s0_tally python-wheel 0 1 0; return 1; }
  trap s0_pywheel_cleanup EXIT
  trap 'exit 130' INT TERM
  local rc=0 line p f e s
  s0_pywheel_steps || rc=1
  # pytest's closing line, e.g. "== 111 passed, 7 skipped in 10.64s ==".
  line=$(grep -E '^=+ .*[0-9]+ (passed|failed|error|errors|skipped)' "$S0_PYWHEEL_TMP/pytest.log" \
         2>/dev/null | tail -1)
  p=$(echo "$line" | grep -oE '[0-9]+ passed' | cut -d' ' -f1)
  f=$(echo "$line" | grep -oE '[0-9]+ failed' | cut -d' ' -f1)
  e=$(echo "$line" | grep -oE '[0-9]+ errors?' | cut -d' ' -f1)
  s=$(echo "$line" | grep -oE '[0-9]+ skipped' | cut -d' ' -f1)
  f=$(( ${f:-0} + ${e:-0} ))
  if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi   # a step before pytest failed
  s0_pywheel_cleanup
  s0_tally python-wheel "${p:-0}" "$f" "${s:-0}"
  [ $rc -eq 0 ] && [ "$f" = 0 ]
}
