#!/usr/bin/env bash
# The conformance rows on both runtimes (docs/behaviours.md "Runtimes"): the
# lifecycle test cases tagged "runtimes" (tests/unit/local/lt.h) run on sim
# here (seconds) and are read from the gvisor run of part 45-gvisor
# (meson test unit-local-gvisor, its testlog); prints one line per runtime.
# Usage: scripts/gvisor-conformance-counts.sh BUILDDIR
set -uo pipefail
build=${1:-build}
exe="$build/tests/unit/local/check_local"
sim=$(S0_TEST_RUNTIME=sim CK_INCLUDE_TAGS=runtimes S0_TEST_META= \
  S0_LOCAL_CRASHER="$build/tests/unit/local/local_crasher" "$exe" 2>&1 | grep -E 'Checks: ' | tail -1)
gv=$(python3 - "$build/meson-logs/testlog-gvisor.json" <<'PY'
import json, re, sys
for line in open(sys.argv[1]):
    t = json.loads(line) if line.strip() else {}
    if t.get("name", "").endswith("unit-local-gvisor"):
        m = re.findall(r"\d+%: Checks: \d+, Failures: \d+, Errors: \d+", t.get("stdout") or "")
        print(m[-1] if m else "no closing line")
PY
)
echo "conformance (test cases tagged runtimes): sim: ${sim:-not run}"
echo "conformance (test cases tagged runtimes): gvisor: ${gv:-not run}"
