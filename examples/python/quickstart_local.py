#!/usr/bin/env python3
"""Seed "Pause And Resume" with the Python client, on the embedded backend.

Claims a sandbox, writes files, runs the seed's Python calls verbatim
(``pause_and_wait``/``resume_and_wait`` with ``memory=True, timeout_sec=360``
and the "Inspect State" prints), and shows what survived a pause. The local
backend has no memory checkpoints yet: the memory pause is refused with 503
``unavailable`` (never silently turned into a filesystem pause), so the
script then pauses filesystem-only and resumes with memory, which is a
filesystem resume when no memory image is retained.

    PYTHONPATH=build/bindings/python python3 examples/python/quickstart_local.py [DATA_DIR]
"""
import sys
import time

from libsandbox0 import LocalBackend, UnavailableError

t0 = time.monotonic()


def step(what: str) -> None:
    print(f"[{(time.monotonic() - t0) * 1000:7.1f} ms] {what}")


def show(sb) -> None:
    print(f"             id={sb.id} status={sb.status} paused={sb.paused} "
          f"runtime_id={sb.runtime_id!r} runtime_generation={sb.runtime_generation}")


with LocalBackend(sys.argv[1] if len(sys.argv) > 1 else None) as backend:
    client = backend.client()
    step(f"backend open on {backend.path} (simulated runtime; real RootFS and storage)")
    sandbox = client.sandboxes.claim("default")
    step("claimed a sandbox from template 'default'")
    show(client.get_sandbox(sandbox.id))

    client.files.write(sandbox.id, "/workspace/notes.md", "# kept\n")
    client.files.write(sandbox.id, "/var/tmp/cache", b"cache")
    client.files.write(sandbox.id, "/tmp/scratch", b"scratch")
    step("wrote /workspace/notes.md, /var/tmp/cache and /tmp/scratch")

    try:
        client.sandboxes.pause_and_wait(
            sandbox.id,
            memory=True,
            timeout_sec=360,
        )
        step("memory pause done")
    except UnavailableError as e:
        step(f"memory pause refused: {e.status_code} {e.code} ({e.reason}): {e.message}")
        sb = client.get_sandbox(sandbox.id)
        print(f"             still {sb.status}, paused={sb.paused}: nothing fell back")
        client.sandboxes.pause_and_wait(
            sandbox.id,
            timeout_sec=360,
            progress=lambda s, t: print(f"             ... {s.status} paused={s.paused} "
                                        f"at {t * 1000:.0f} ms"),
        )
        step("filesystem pause done")

    sb = client.get_sandbox(sandbox.id)
    print("paused=", sb.paused)
    print("status=", sb.status)
    print("runtime_id=", sb.runtime_id)
    print("runtime_generation=", sb.runtime_generation)

    client.sandboxes.resume_and_wait(
        sandbox.id,
        memory=True,
        timeout_sec=360,
    )
    step("resumed (memory requested; no image retained, so a filesystem resume)")
    sb = client.get_sandbox(sandbox.id)
    print("paused=", sb.paused)
    print("status=", sb.status)
    print("runtime_id=", sb.runtime_id)
    print("runtime_generation=", sb.runtime_generation)

    print("             /workspace/notes.md:", client.files.read(sandbox.id, "/workspace/notes.md"))
    print("             /var/tmp/cache:", client.files.read(sandbox.id, "/var/tmp/cache"))
    print("             /tmp/scratch exists:", client.files.exists(sandbox.id, "/tmp/scratch"))
    assert client.files.read(sandbox.id, "/workspace/notes.md") == b"# kept\n"
    assert not client.files.exists(sandbox.id, "/tmp/scratch")

    snap = client.snapshots.create(sandbox.id, "milestone")
    child = client.sandboxes.fork(sandbox.id)
    step(f"snapshot {snap.id} and paused fork {child.id}")
    client.sandboxes.delete(child.id)
    client.sandboxes.delete(sandbox.id)
    client.snapshots.delete(snap.id)
    step("deleted everything")
print("DONE")
