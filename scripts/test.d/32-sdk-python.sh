# Part "sdk-python": the official Python SDK (PyPI sandbox0, pinned with
# pytest in tests/sdk-python/requirements.txt) against `s0 serve`: one server
# per test module on a fresh data directory. The venv lives under the build
# dir (build/sdk-python-venv) and is remade when the pins change. Tests the
# SDK itself mishandles are xfail(strict=True) citing its source; they are
# counted as passed (an unexpected pass fails) and their number is printed
# in the closing line.
deps() {
  s0_apt_install python3-venv
}

run() {
  local venv=build/sdk-python-venv req=tests/sdk-python/requirements.txt
  local py=$venv/bin/python log=build/meson-logs/sdk-python-junit.xml
  if [ ! -x "$py" ] || ! cmp -s "$req" "$venv/requirements.txt"; then
    echo "==> venv $venv with $(grep -v '^#' "$req" | tr '\n' ' ')"
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv" &&
      "$py" -m pip install --disable-pip-version-check --no-input -q -r "$req" &&
      cp "$req" "$venv/requirements.txt" ||
      { rm -rf "$venv"; s0_tally sdk-python 0 1 0; return 1; }
  fi
  mkdir -p build/meson-logs
  local rc=0
  (cd tests/sdk-python && S0_BIN="$OLDPWD/build/libsandbox0/cli/s0" PYTHONDONTWRITEBYTECODE=1 \
     nice "$OLDPWD/$py" -m pytest -v -rxXs -p no:cacheprovider --junitxml="$OLDPWD/$log" .) ||
    rc=1
  local counts p f s x
  counts=$("$py" - "$log" <<'PY'
import sys
import xml.etree.ElementTree as ET

passed = failed = skipped = xfail = 0
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    kinds = [c for c in case if c.tag in ("failure", "error", "skipped")]
    if any(c.tag in ("failure", "error") for c in kinds):
        failed += 1
    elif kinds and kinds[0].get("type") == "pytest.xfail":
        xfail += 1
        passed += 1  # the SDK bug is still there, as the test expects
    elif kinds:
        skipped += 1
    else:
        passed += 1
print(passed, failed, skipped, xfail)
PY
  ) || counts="0 1 0 0"
  read -r p f s x <<< "$counts"
  if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi   # pytest failed before any test
  echo "sdk-python: $p passed, $f failed, $s skipped ($x xfail: SDK bugs)"
  s0_tally sdk-python "$p" "$f" "$s"
  [ $rc -eq 0 ] && [ "$f" = 0 ]
}
