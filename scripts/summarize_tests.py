#!/usr/bin/env python3
"""Print each test runner's closing line and one final 'N passed, N failed' line.

Reads meson's testlog.json files (one JSON object per test); --tag NAME labels
the lines (scripts/test's parts call it so); --failures FILE appends, for each
test that failed, its name and the lines that say why (check's ":F:"/":E:"
lines, pytest's "FAILED", node's "not ok"; at most 8 per test). Each check
runner prints its own closing line ("100%: Checks: N, Failures: F, Errors: E"),
pytest its "N passed" line and node:test its TAP summary ("# pass N",
"# fail N", "# cancelled N"); these are echoed here, and the totals count
checks where the runner reported them and whole meson tests otherwise.
"""
import json
import re
import sys

CHECK = re.compile(r"(\d+)%: Checks: (\d+), Failures: (\d+), Errors: (\d+)")
PYTEST = re.compile(r"=+ (?:(\d+) failed, )?(\d+) passed")
# node --test's closing TAP comments (the summary of the whole run)
NODE_PASS = re.compile(r"^# pass (\d+)$", re.M)
NODE_FAIL = re.compile(r"^# fail (\d+)$", re.M)
NODE_CANCELLED = re.compile(r"^# cancelled (\d+)$", re.M)
WHY = re.compile(r":[EF]:|^FAILED |^not ok |ThreadSanitizer|AddressSanitizer|\bError\b", re.M)


def why_lines(out):
    """The lines of one test's output that say why it failed (at most 8)."""
    return [ln for ln in out.splitlines() if WHY.search(ln)][:8]


def main(args):
    fixed_tag = failures = None
    while args[:1] in (["--tag"], ["--failures"]):
        if args[0] == "--tag":
            fixed_tag = args[1]
        else:
            failures = open(args[1], "a")
        args = args[2:]
    passed = failed = skipped = 0
    for path in args:
        tag = fixed_tag or ("asan" if "asan" in path else "main")
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                t = json.loads(line)
                out = (t.get("stdout") or "") + (t.get("stderr") or "")
                res = t.get("result")
                before = failed
                m = CHECK.findall(out)
                p = PYTEST.findall(out)
                np_, nf = NODE_PASS.findall(out), NODE_FAIL.findall(out)
                if m:
                    _, n, fl, er = (int(x) for x in m[-1])
                    print(f"[{tag}] {t['name']}: {m[-1][0]}%: Checks: {n}, Failures: {fl}, Errors: {er}")
                    passed += n - fl - er
                    failed += fl + er
                    if res not in ("OK", "EXPECTEDFAIL") and fl + er == 0:
                        failed += 1
                elif p:
                    fl, ok = int(p[-1][0] or 0), int(p[-1][1])
                    print(f"[{tag}] {t['name']}: {ok} passed, {fl} failed")
                    passed += ok
                    failed += fl + (1 if res not in ("OK", "EXPECTEDFAIL") and fl == 0 else 0)
                elif np_ and nf:
                    ok, fl = int(np_[-1]), int(nf[-1])
                    nc = NODE_CANCELLED.findall(out)
                    fl += int(nc[-1]) if nc else 0
                    print(f"[{tag}] {t['name']}: # pass {ok}, # fail {fl}")
                    passed += ok
                    failed += fl + (1 if res not in ("OK", "EXPECTEDFAIL") and fl == 0 else 0)
                elif res == "SKIP":
                    skipped += 1
                    print(f"[{tag}] {t['name']}: skipped")
                elif res in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                    print(f"[{tag}] {t['name']}: ok")
                else:
                    failed += 1
                    print(f"[{tag}] {t['name']}: {res}")
                if failures and failed > before:
                    failures.write(f"{t['name']}: {res}\n")
                    for ln in why_lines(out):
                        failures.write(f"    {ln}\n")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
