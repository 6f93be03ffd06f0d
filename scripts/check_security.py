#!/usr/bin/env python3
"""Every test docs/security.md names exists; every threat without one is listed as a gap.

    scripts/check_security.py [--root DIR]

The threat tables of docs/security.md have rows `| SEC-NN | threat | what
stops it | tests |`. The tests column names tests as docs/behaviours.md does
and with the same pattern (scripts/check_behaviour_ids.py): `path::name`, where
`name` must occur in the file as a whole word (a C START_TEST, a Python def, a
Go func, a JavaScript test title), or a bare `path` (the whole file: a fuzz
target, a soak program, a test part). A row that names no test must say
"No test yet"; so may a row whose tests cover only part of the threat. Such
rows are gaps: printed, not failed, but each must be listed under "## Open
gaps" in docs/security.md, and that list names no other row.

Fails (exit 1) on: a missing file or test name, an ID with two rows, a row
with neither a test nor "No test yet", a gap missing from "Open gaps" or an
"Open gaps" entry that is not a gap row. Prints each finding as
`docs/security.md:line: …`.
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_behaviour_ids as behaviours  # noqa: E402  (its test pattern and --root)

ROOT = behaviours.ROOT
DOC = "docs/security.md"
ROW = re.compile(r"^\|\s*(SEC-[0-9]{2})\s*\|(.*)\|\s*$")
GAP = re.compile(r"no test yet", re.IGNORECASE)
GAPS_HEADING = "## Open gaps"
GAP_ENTRY = re.compile(r"^- (SEC-[0-9]{2})\b")


def missing_test(path, name):
    """Why `path::name` (name None or empty: the whole file) is not a test, or None."""
    full = os.path.join(ROOT, path)
    if not os.path.isfile(full):
        return f"names {path}, which does not exist"
    if not name:
        return None
    text = open(full, encoding="utf-8", errors="replace").read()
    if re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", text):
        return None
    return f"names test {name!r}, which is not in {path}"


def main():
    doc_path = os.path.join(ROOT, DOC)
    if not os.path.isfile(doc_path):
        print(f"check_security: FAILED: {DOC} is missing")
        return 1
    findings, rows, gaps, listed = [], {}, {}, {}
    tests = 0
    in_gaps = False
    for n, line in enumerate(open(doc_path, encoding="utf-8"), 1):
        if line.startswith("## "):
            in_gaps = line.strip() == GAPS_HEADING
        if in_gaps:
            m = GAP_ENTRY.match(line)
            if m:
                listed[m.group(1)] = n
            continue
        m = ROW.match(line)
        if not m:
            continue
        sid = m.group(1)
        if sid in rows:
            findings.append(f"{DOC}:{n}: {sid} has two rows")
        rows[sid] = n
        cell = m.group(2).split("|")[-1]
        named = behaviours.TEST.findall(cell)
        for path, name in named:
            tests += 1
            why = missing_test(path, name)
            if why:
                findings.append(f"{DOC}:{n}: {sid} {why}")
        if GAP.search(cell):
            gaps[sid] = n
        elif not named:
            findings.append(f"{DOC}:{n}: {sid} names no test and does not say \"No test yet\"")
    if not rows:
        findings.append(f"{DOC}:1: no threat rows (| SEC-NN | … |)")
    for sid, n in sorted(gaps.items()):
        if sid not in listed:
            findings.append(f"{DOC}:{n}: {sid} says \"No test yet\" but is not under "
                            f"\"{GAPS_HEADING}\"")
    for sid, n in sorted(listed.items()):
        if sid not in gaps:
            findings.append(f"{DOC}:{n}: \"{GAPS_HEADING}\" lists {sid}, which is not a row "
                            f"saying \"No test yet\"")
    for f in findings:
        print(f)
    for sid in sorted(gaps):
        print(f"gap: {sid} (no test yet, {DOC}:{gaps[sid]})")
    print(f"check_security: {'FAILED' if findings else 'ok'}: {len(rows)} threats in {DOC}, "
          f"{tests} tests named, {len(gaps)} gaps, {len(findings)} problems")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
