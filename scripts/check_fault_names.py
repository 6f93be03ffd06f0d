#!/usr/bin/env python3
"""Every fault point the code hits is in the table of points.

    scripts/check_fault_names.py [--root DIR]

Reads the table `points[]` of libsandbox0/local/lifecycle/faults.c (one
`{"name", "step|step"}` entry a line; "" no steps, "*" any step) and every
call of s0__fault_hit, s0__fault_pass, s0__fault_armed and
s0__fault_any_armed under libsandbox0/, plus the node-agent wrappers that
pass a fixed name (s0__ctld_primary_fails, s0__ctld_reboot_hit). A literal
name or step missing from the table is an error, printed as `path:line`. A
name or step computed at run time is listed as such: faults.c asserts it
against the table when it is hit, so the C suites check those. Exits 1 on
an error.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if "--root" in sys.argv[1:-1]:
    ROOT = os.path.abspath(sys.argv[sys.argv.index("--root") + 1])
TABLE_FILE = os.path.join(ROOT, "libsandbox0/local/lifecycle/faults.c")

# name(args): (index of the name argument or a fixed name, index of the step argument)
CALLS = {
    "s0__fault_hit": (1, 2),
    "s0__fault_pass": (1, 2),
    "s0__fault_armed": (1, 2),
    "s0__fault_any_armed": (1, None),
    "s0__ctld_primary_fails": ("ctld_primary_fail", 1),
    "s0__ctld_reboot_hit": ("node_reboot", 1),
}
CALL = re.compile(r"\b(" + "|".join(CALLS) + r")\s*\(")
LITERAL = re.compile(r'^"((?:[^"\\]|\\.)*)"$')


def read_table():
    text = open(TABLE_FILE, encoding="utf-8").read()
    m = re.search(r"\bpoints\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
    if not m:
        sys.exit(f"check_fault_names: no points[] table in {TABLE_FILE}")
    body = re.sub(r'"\s*\n\s*"', "", m.group(1))  # join split string literals
    table = {}
    for name, steps in re.findall(r'\{\s*"([^"]+)"\s*,\s*"([^"]*)"\s*\}', body):
        table[name] = steps.split("|") if steps and steps != "*" else ([] if not steps else "*")
    return table


def args_of(text, start):
    """The top-level comma-separated arguments of the call whose '(' is at start."""
    depth, cur, out, i = 0, [], [], start
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                out.append("".join(cur).strip())
                return out
        elif c == "," and depth == 1:
            out.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    return out


def main():
    table = read_table()
    errors, dynamic, checked = [], [], 0
    for d, _, files in os.walk(os.path.join(ROOT, "libsandbox0")):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, ROOT)
            if rel.startswith("libsandbox0/local/lifecycle/faults."):
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            for m in CALL.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                prev = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
                if re.fullmatch(r"\s*(bool|s0__fault_act|int)\s*", prev):
                    continue  # a declaration or definition, not a call
                args = args_of(text, m.end() - 1)
                which, step_at = CALLS[m.group(1)]
                if isinstance(which, str):
                    name = which
                else:
                    lit = LITERAL.match(args[which]) if len(args) > which else None
                    if not lit:
                        dynamic.append(f"{rel}:{line}: {m.group(1)} name {args[which:which + 1]}")
                        continue
                    name = lit.group(1)
                step = None
                if step_at is not None and len(args) > step_at and args[step_at] != "NULL":
                    lit = LITERAL.match(args[step_at])
                    if not lit:
                        dynamic.append(f"{rel}:{line}: {m.group(1)} {name!r} step {args[step_at]}")
                    else:
                        step = lit.group(1)
                checked += 1
                if m.group(1) == "s0__fault_any_armed":
                    base = name.rstrip("@")
                    if not any(n == base or n.startswith(name) for n in table):
                        errors.append(f"{rel}:{line}: no fault point starts with {name!r}")
                    continue
                if name not in table:
                    errors.append(f"{rel}:{line}: fault point {name!r} is not in the table "
                                  "of libsandbox0/local/lifecycle/faults.c")
                elif step is not None and table[name] != "*" and step not in table[name]:
                    errors.append(f"{rel}:{line}: fault point {name!r} has no step {step!r} "
                                  f"in the table (steps: {'|'.join(table[name]) or 'none'})")
    for e in errors:
        print(e)
    for x in dynamic:
        print(f"{x}: computed at run time (asserted by faults.c when hit)")
    print(f"check_fault_names: {'FAILED' if errors else 'ok'}: {checked} hits checked against "
          f"{len(table)} points, {len(errors)} unknown, {len(dynamic)} computed at run time")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
