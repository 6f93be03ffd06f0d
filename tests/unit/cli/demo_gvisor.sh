#!/usr/bin/env bash
# `s0 demo --runtime gvisor` (suite gvisor, as root, part 45-gvisor): python3
# runs inside (the python3 root tree of $S0_TEST_PYTHON_TREE), files survive a
# filesystem-only pause, a background process does not, every step passes,
# and nothing of the demo is left on the host.
set -uo pipefail
s0=${S0_CLI:?S0_CLI names the s0 program}
[ -n "${S0_TEST_PYTHON_TREE:-}" ] && export S0_GVISOR_TEMPLATE=$S0_TEST_PYTHON_TREE
tmp=$(mktemp -d "${TMPDIR:-/tmp}/s0-demo-test-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
TMPDIR=$tmp "$s0" demo --runtime gvisor >"$out" 2>&1
rc=$?
cat "$out"
fail=0
check() { grep -qF -- "$1" "$out" || { echo "FAIL: no \"$1\" in the demo's output"; fail=1; }; }
[ "$rc" = 0 ] || { echo "FAIL: s0 demo exited $rc"; fail=1; }
check "runtime gvisor: real programs in runsc sandboxes"
check "ok   python3 ran the script inside the sandbox"
check "ok   both files survived (cat inside the new generation)"
check "ok   the background sleep is gone"
check "DONE: 0 expectation(s) failed"
left=$( (pgrep -af -- "$tmp" || true; grep -F "$tmp" /proc/mounts || true; losetup -a | grep -F "$tmp" || true) | grep -v pgrep )
[ -z "$left" ] || { echo "FAIL: left on the host: $left"; fail=1; }
if [ "$fail" = 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
