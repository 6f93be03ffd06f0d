#!/usr/bin/env python3
"""Comments cite only what is in the repository.

    scripts/check_citations.py [--root DIR]

Reads the comments of every source file of the repository (C, SWIG, Python
comments and docstrings, JavaScript and TypeScript, Go, shell, meson) and the whole text of
every Markdown file, and reports:

- a cited `*.md` that is not a file of the repository, resolved from the
  repository root or from the citing file's folder (a path starting with
  `/` is a path inside a sandbox, not a citation);
- a citation of the team's shared folder or of the product documents:
  `../shared`, `/work/…`, `seeds/…`, "seed 000", `seed "Section"`, "the seed's …",
  "the seed snippet", "from the seed".

Behaviour IDs point into docs/behaviours.md, decisions into
docs/decisions.md, the wire into docs/wire.md. Prints `path:line: …` per
finding; exits 1 when there is one.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if "--root" in sys.argv[1:-1]:
    ROOT = os.path.abspath(sys.argv[sys.argv.index("--root") + 1])
SELF = "scripts/check_citations.py"
SKIP_DIRS = ("subprojects/", "build", ".git/", "node_modules/")

C_LIKE = (".c", ".h", ".i", ".mjs", ".js", ".ts", ".cpp", ".cc", ".go")
PY = (".py", ".pyi")
HASH = (".sh", ".build", ".txt", ".wrap", ".yml", ".yaml", ".toml", ".cfg")

MD = re.compile(r"(?<![\w/.-])((?:\.\.?/)?[A-Za-z0-9_][\w-]*(?:/[\w.-]+)*\.md)\b")
FORBIDDEN = [
    (re.compile(r"\.\./shared\b"), "the team's shared folder"),
    (re.compile(r"(?<![\w.])/work/"), "a path on the team's machine"),
    (re.compile(r"\bseeds?/"), "the product seed documents"),
    (re.compile(r"\bseed 0\d\d\b"), "a product seed document"),
    (re.compile(r"\bthe seed's\b", re.I), "a product seed document"),
    (re.compile(r'\bseed "[A-Z]'), "a section of a product seed document"),
    (re.compile(r"[;(,]\s*seed\s*$"), "a product seed document"),
    (re.compile(r"\bthe seed snippet\b|\b(?:from|of) the seed\b"), "a product seed document"),
]


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


def c_comments(text):
    """(line, text) of each /* */ and // comment, skipping string literals."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'`":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            out.append((text.count("\n", 0, i) + 1, text[i:j]))
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((text.count("\n", 0, i) + 1, text[i:j]))
            i = j
        else:
            i += 1
    return out


def hash_comments(text, docstrings=False):
    out, i, n = [], 0, len(text)
    while i < n:
        if docstrings and text.startswith(('"""', "'''"), i):
            q = text[i:i + 3]
            j = text.find(q, i + 3)
            j = n if j < 0 else j
            out.append((text.count("\n", 0, i) + 1, text[i:j]))
            i = j + 3
        elif text[i] in "\"'":
            q = text[i]
            j = i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text[i] == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((text.count("\n", 0, i) + 1, text[i:j]))
            i = j
        else:
            i += 1
    return out


def comments(path, text):
    base = os.path.basename(path)
    if path.endswith(".md"):
        return [(1, text)]
    if path.endswith(C_LIKE):
        return c_comments(text)
    if path.endswith(PY):
        return hash_comments(text, docstrings=True)
    if path.endswith(HASH) or base in ("meson.build", "meson_options.txt") or \
            text.startswith("#!"):
        return hash_comments(text)
    return []


def main():
    findings, nfiles = [], 0
    for rel in tracked_files():
        if rel == SELF or rel.startswith(SKIP_DIRS):
            continue
        path = os.path.join(ROOT, rel)
        if not os.path.isfile(path):
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        blocks = comments(rel, text)
        if blocks:
            nfiles += 1
        for start, block in blocks:
            for k, line in enumerate(block.split("\n")):
                where = f"{rel}:{start + k}"
                for m in MD.finditer(line):
                    cited = m.group(1)
                    if not (os.path.isfile(os.path.join(ROOT, cited)) or
                            os.path.isfile(os.path.join(os.path.dirname(path), cited))):
                        findings.append(f"{where}: cites {cited}, which is not in the repository")
                for pat, what in FORBIDDEN:
                    m = pat.search(line)
                    if m:
                        findings.append(f"{where}: cites {what} ({m.group(0)!r})")
    for f in findings:
        print(f)
    print(f"check_citations: {'FAILED' if findings else 'ok'}: {len(findings)} citations of "
          f"files outside the repository ({nfiles} files read)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
