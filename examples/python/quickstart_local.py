#!/usr/bin/env python3
"""Seed "Pause And Resume" with the Python client, on the embedded backend.

Claims a sandbox, writes files and starts a REPL context holding a shell
variable and a background job, then runs CL-14's Python calls verbatim
(``pause_and_wait``/``resume_and_wait`` with ``memory=True, timeout_sec=360``
and the "Inspect State" prints): the memory pause retains the execution
image, so after the memory resume the variable, the job (same PID) and the
runtime tmpfs (/tmp) are all still there, in a new runtime (new
``runtime_id``, ``runtime_generation`` + 1). A filesystem-only pause
afterwards shows the difference: files under /workspace and /var/tmp
survive, processes and /tmp do not.

    PYTHONPATH=build/bindings/python python3 examples/python/quickstart_local.py [DATA_DIR]
"""
import sys
import time

from libsandbox0 import LocalBackend, NotFoundError

t0 = time.monotonic()


def step(what: str) -> None:
    print(f"[{(time.monotonic() - t0) * 1000:7.1f} ms] {what}")


def show(sb) -> None:
    print(f"             id={sb.id} status={sb.status} paused={sb.paused} "
          f"runtime_id={sb.runtime_id!r} runtime_generation={sb.runtime_generation}")


def job_listed(ps: str, pid: str) -> bool:
    return any(line.split()[:1] == [pid] and "sleep" in line for line in ps.splitlines())


with LocalBackend(sys.argv[1] if len(sys.argv) > 1 else None) as backend:
    client = backend.client()
    step(f"backend open on {backend.path} (simulated runtime; real RootFS and storage)")
    sandbox = client.sandboxes.claim("default")
    step("claimed a sandbox from template 'default'")
    before = client.get_sandbox(sandbox.id)
    show(before)

    client.files.write(sandbox.id, "/workspace/notes.md", "# kept\n")
    client.files.write(sandbox.id, "/var/tmp/cache", b"cache")
    client.files.write(sandbox.id, "/tmp/scratch", b"scratch")
    step("wrote /workspace/notes.md, /var/tmp/cache and /tmp/scratch")

    ctx = client.contexts.create(sandbox.id)["id"]
    client.contexts.exec(sandbox.id, ctx, "GREETING=hello")
    client.contexts.exec(sandbox.id, ctx, "sleep 100000 &")
    pid = client.contexts.exec(sandbox.id, ctx, "echo $!")["stdout"].strip()
    step(f"REPL context {ctx}: GREETING=hello, background `sleep 100000` is PID {pid}")

    client.sandboxes.pause_and_wait(
        sandbox.id,
        memory=True,
        timeout_sec=360,
        progress=lambda s, t: print(f"             ... {s.status} paused={s.paused} "
                                    f"at {t * 1000:.0f} ms"),
    )
    step("memory pause done: execution image retained, compute released")
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
    step("memory resume done: restored into a new runtime")
    sb = client.get_sandbox(sandbox.id)
    print("paused=", sb.paused)
    print("status=", sb.status)
    print("runtime_id=", sb.runtime_id)
    print("runtime_generation=", sb.runtime_generation)
    assert sb.runtime_id != before.runtime_id
    assert sb.runtime_generation == before.runtime_generation + 1

    greeting = client.contexts.exec(sandbox.id, ctx, "echo $GREETING")["stdout"].strip()
    ps = client.contexts.exec(sandbox.id, ctx, "ps")["stdout"]
    scratch = client.files.read(sandbox.id, "/tmp/scratch")
    print("             echo $GREETING ->", greeting)
    print(f"             PID {pid} still running:", job_listed(ps, pid))
    print("             /tmp/scratch:", scratch)
    assert greeting == "hello" and job_listed(ps, pid) and scratch == b"scratch"

    client.sandboxes.pause_and_wait(sandbox.id, timeout_sec=360)
    client.sandboxes.resume_and_wait(sandbox.id, timeout_sec=360)
    step("filesystem-only pause and resume (the default)")
    print("             /workspace/notes.md:", client.files.read(sandbox.id, "/workspace/notes.md"))
    print("             /var/tmp/cache:", client.files.read(sandbox.id, "/var/tmp/cache"))
    print("             /tmp/scratch exists:", client.files.exists(sandbox.id, "/tmp/scratch"))
    try:
        client.contexts.get(sandbox.id, ctx)
        context_kept = True
    except NotFoundError:
        context_kept = False
    print("             REPL context kept:", context_kept)
    assert client.files.read(sandbox.id, "/workspace/notes.md") == b"# kept\n"
    assert not client.files.exists(sandbox.id, "/tmp/scratch") and not context_kept

    snap = client.snapshots.create(sandbox.id, "milestone")
    child = client.sandboxes.fork(sandbox.id)
    step(f"snapshot {snap.id} and paused fork {child.id}")
    client.sandboxes.delete(child.id)
    client.sandboxes.delete(sandbox.id)
    client.snapshots.delete(snap.id)
    step("deleted everything")
print("DONE")
