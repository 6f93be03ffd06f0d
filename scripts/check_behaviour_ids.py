#!/usr/bin/env python3
"""Every behaviour ID cited in the repository is in docs/behaviours.md, and
every test docs/behaviours.md names exists.

    scripts/check_behaviour_ids.py [--root DIR]

An ID is a family prefix (those of docs/behaviours.md's tables) and two digits
(`MEM-03`); a range written `CL-01..CL-10` cites both ends. The tables of
docs/behaviours.md have rows `| ID | behaviour | tests |`; the tests column
names tests as `path::name` (`name` must occur in the file: a C START_TEST,
a Python def, a JavaScript test title) or as a bare `path` (the whole
file). Prints each finding as `path:line: …`; exits 1 when there is one.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if "--root" in sys.argv[1:-1]:
    ROOT = os.path.abspath(sys.argv[sys.argv.index("--root") + 1])
DOC = "docs/behaviours.md"
ID = re.compile(r"\b([A-Z]{2,4})-([0-9]{2})\b")
ROW = re.compile(r"^\|\s*([A-Z]{2,4}-[0-9]{2})\s*\|(.*)\|\s*$")
TEST = re.compile(r"`([\w./-]+\.(?:c|py|mjs|js|ts|go|sh))(?:::([^`]+))?`")


def tracked_files():
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split("\n")
        return [f for f in out if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(ROOT):
            rel = os.path.relpath(d, ROOT)
            dirs[:] = [x for x in dirs if not (rel == "." and x.startswith(("build", ".git")))
                       and x not in ("node_modules", "subprojects")]
            files += [os.path.normpath(os.path.join(rel, n)) for n in names]
        return files


def main():
    findings = []
    doc_path = os.path.join(ROOT, DOC)
    if not os.path.isfile(doc_path):
        print(f"check_behaviour_ids: FAILED: {DOC} is missing")
        return 1
    rows, tests = {}, 0
    for n, line in enumerate(open(doc_path, encoding="utf-8"), 1):
        m = ROW.match(line)
        if not m:
            continue
        if m.group(1) in rows:
            findings.append(f"{DOC}:{n}: {m.group(1)} has two rows")
        rows[m.group(1)] = n
        for path, name in TEST.findall(m.group(2).split("|")[-1]):
            tests += 1
            full = os.path.join(ROOT, path)
            if not os.path.isfile(full):
                findings.append(f"{DOC}:{n}: {m.group(1)} names {path}, which does not exist")
                continue
            text = open(full, encoding="utf-8", errors="replace").read()
            if name and not re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", text):
                findings.append(f"{DOC}:{n}: {m.group(1)} names test {name!r}, "
                                f"which is not in {path}")
    # the catalogue's families, plus any new one docs/behaviours.md starts
    families = {"CL", "COST", "EPH", "FS", "GW", "INS", "MEM", "MFB", "PTX", "REC", "RTX", "SES",
                "TTL", "UC"} | {i.split("-")[0] for i in rows}
    cited = 0
    for rel in tracked_files():
        if rel == DOC or rel.startswith("subprojects/"):
            continue
        try:
            text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError, IsADirectoryError):
            continue
        for m in ID.finditer(text):
            if m.group(1) not in families:
                continue
            cited += 1
            if m.group(0) not in rows:
                line = text.count("\n", 0, m.start()) + 1
                findings.append(f"{rel}:{line}: cites {m.group(0)}, which has no row in {DOC}")
    for f in findings:
        print(f)
    print(f"check_behaviour_ids: {'FAILED' if findings else 'ok'}: {len(rows)} IDs in {DOC} "
          f"({len(families)} families), {cited} citations, {tests} tests named, "
          f"{len(findings)} problems")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
