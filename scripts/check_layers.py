#!/usr/bin/env python3
"""Includes under libsandbox0/ point only downward (docs/architecture.md "Layers").

    scripts/check_layers.py [--quiet] [--root DIR]   (DIR: another checkout)

Every `#include "..."` of a .c or .h file under libsandbox0/ is resolved (the
including file's directory first, then libsandbox0/, then include/) and both
ends are given a layer by path. The order, lowest first:

    common
    objects, meta, client      (side by side: none includes another)
    blocks < rootfs < fsview < runtime < checkpoint < lifecycle
    api                        (local/api/: may also include client/)
    local                      (local/local.c, local/local_internal.h: the s0_local_* facade)
    server < cli

A file may include its own layer and any layer below it, with two
exceptions: objects, meta and client never include each other, and client is
below api only — no layer from blocks to lifecycle includes client/. Public
headers (sandbox0/*.h) and system headers are open to everyone.

Prints each violation as `path:line: LAYER includes "header" (LAYER)`, then a
count per pair of layers; exits 1 when there is any, 0 otherwise.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if "--root" in sys.argv[1:-1]:
    ROOT = os.path.abspath(sys.argv[sys.argv.index("--root") + 1])
LIB = os.path.join(ROOT, "libsandbox0")
INC = os.path.join(ROOT, "include")

# Layer of a path below libsandbox0/, first matching prefix wins.
PREFIXES = [
    ("common/", "common"),
    ("client/", "client"),
    ("local/objects/", "objects"),
    ("local/meta/", "meta"),
    ("local/blocks/", "blocks"),
    ("local/rootfs/", "rootfs"),
    ("local/fsview/", "fsview"),
    ("local/runtime/", "runtime"),
    ("local/checkpoint/", "checkpoint"),
    ("local/lifecycle/", "lifecycle"),
    ("local/api/", "api"),
    ("local/local", "local"),
    ("server/", "server"),
    ("cli/", "cli"),
]

STACK = ["blocks", "rootfs", "fsview", "runtime", "checkpoint", "lifecycle"]
ALLOWED = {"common": set(), "objects": {"common"}, "meta": {"common"}, "client": {"common"}}
below = {"common", "objects", "meta"}
for layer in STACK:
    ALLOWED[layer] = set(below)
    below.add(layer)
ALLOWED["api"] = below | {"client"}
ALLOWED["local"] = ALLOWED["api"] | {"api"}
ALLOWED["server"] = ALLOWED["local"] | {"local"}
ALLOWED["cli"] = ALLOWED["server"] | {"server"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    """The layer of an absolute path, or None outside libsandbox0/."""
    rel = os.path.relpath(path, LIB)
    if rel.startswith(".."):
        return None
    for prefix, layer in PREFIXES:
        if rel.startswith(prefix):
            return layer
    return None


def resolve(src, name):
    for base in (os.path.dirname(src), LIB, INC):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            return p
    return None


def main():
    quiet = "--quiet" in sys.argv[1:]
    violations, unknown, pairs = [], [], {}
    nfiles = nincl = 0
    for d, _, files in os.walk(LIB):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            src = os.path.join(d, f)
            here = layer_of(src)
            if here is None:
                unknown.append(os.path.relpath(src, ROOT))
                continue
            nfiles += 1
            with open(src, encoding="utf-8", errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    nincl += 1
                    target = resolve(src, m.group(1))
                    there = layer_of(target) if target else None
                    if there is None or there == here or there in ALLOWED[here]:
                        continue
                    rel = os.path.relpath(src, ROOT)
                    violations.append(f'{rel}:{n}: {here} includes "{m.group(1)}" ({there})')
                    pairs[(here, there)] = pairs.get((here, there), 0) + 1
    for v in sorted(violations):
        print(v)
    for u in unknown:
        print(f"{u}: not in any layer (add its folder to scripts/check_layers.py)")
    if violations and not quiet:
        print("violations per pair (includer -> included):")
        for (a, b), c in sorted(pairs.items()):
            print(f"  {a} -> {b}: {c}")
    status = "ok" if not violations and not unknown else "FAILED"
    print(f"check_layers: {status}: {len(violations)} upward or sideways includes, "
          f"{len(unknown)} files outside the layers ({nfiles} files, {nincl} includes)")
    return 1 if violations or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
