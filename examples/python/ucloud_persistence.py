#!/usr/bin/env python3
"""Seed "Sandbox persistence" (UCloud style): every code block of the
document, verbatim but for the import name, on the embedded backend.

The facade's ``pause()`` is a memory pause, as the document says: the
file system and the memory state (processes, variables, /tmp) are saved,
and ``Sandbox.connect()`` restores them. After the document's blocks, a
REPL context shows it: a variable and a background job set before
``pause()`` are still there, with the same PID, after ``connect()``. The
"Auto pause" rounds are TTL pauses, which are filesystem-only.

    PYTHONPATH=build/bindings/python python3 examples/python/ucloud_persistence.py [DATA_DIR]
"""
import sys

from libsandbox0 import LocalBackend, NotFoundError


def block(title, code):
    """Run one of the document's blocks; returns its variables."""
    print(f"\n== {title}")
    ns = {}
    try:
        exec(code, ns)
    except NotFoundError as e:
        # "Delete a suspended sandbox" shows both forms one after the other on
        # the same sandbox: the second one finds it already deleted.
        print(f"   -> {type(e).__name__} ({e.status_code}): {e.sandbox_id} was already "
              f"killed; the two forms are alternatives")
    return ns


SWITCH = '''
from libsandbox0 import Sandbox

sandbox = Sandbox.create() # Enter the running state after creation
sandbox_id = sandbox.sandbox_id

# Pause the sandbox: running -> paused
sandbox.pause()

#Restore sandbox: paused -> running
same_sandbox = Sandbox.connect(sandbox_id)

# Destroy sandbox: running/paused -> destroyed
same_sandbox.kill()
'''

PAUSE = '''
from libsandbox0 import Sandbox

sbx = Sandbox.create()
print("Sandbox has been created", sbx.sandbox_id)

# Pause the sandbox and save sbx.sandbox_id for later resumption
sbx.pause()
print("Sandbox has been paused", sbx.sandbox_id)
'''

RESTORE = '''
from libsandbox0 import Sandbox

sbx = Sandbox.create()
print("Sandbox has been created", sbx.sandbox_id)

# Pause the sandbox and save the ID
sandbox_id = sbx.sandbox_id
sbx.pause()
print("Sandbox has been paused", sandbox_id)

# Connect to the sandbox; if the target is paused, it will automatically resume
same_sbx = Sandbox.connect(sandbox_id)
print("Sandbox connected", same_sbx.sandbox_id)
'''

LIST = '''
from libsandbox0 import Sandbox, SandboxQuery, SandboxState

# Query all suspended sandboxes
paginator = Sandbox.list(
    query=SandboxQuery(state=[SandboxState.PAUSED]),
)

# Get the first page
sandboxes = paginator.next_items()

# Get the remaining pages
while paginator.has_next:
    items = paginator.next_items()
    sandboxes.extend(items)

for sbx in sandboxes:
    print("Sandbox paused", sbx.sandbox_id)
'''

DELETE = '''
from libsandbox0 import Sandbox

sbx = Sandbox.create()
sbx.pause()

# Delete by instance
sbx.kill()

# You can also delete by sandbox ID
Sandbox.kill(sbx.sandbox_id)
'''

TIMEOUT = '''
from libsandbox0 import Sandbox

sbx = Sandbox.connect("your-sandbox-id", timeout=60) # 60 seconds
'''

AUTO_PAUSE = '''
from libsandbox0 import Sandbox

sandbox = Sandbox.create(
    timeout=10 * 60, # Optional: set the timeout to 10 minutes
    lifecycle={
        "on_timeout": "pause", # Automatically pause after timeout
        "auto_resume": False, # Optional, default value is False
    },
)
'''

with LocalBackend(sys.argv[1] if len(sys.argv) > 1 else None, manual_clock=True) as backend, \
        backend.as_default() as client:
    block("Switch sandbox status", SWITCH)
    block("Pause sandbox", PAUSE)
    block("Restore sandbox", RESTORE)

    print("\n== What pause() keeps: a REPL context across pause() and connect()")
    from libsandbox0 import Sandbox

    sbx = Sandbox.create()
    sid = sbx.sandbox_id
    ctx = client.contexts.create(sid)["id"]
    client.contexts.exec(sid, ctx, "GREETING=hello")
    client.contexts.exec(sid, ctx, "sleep 100000 &")
    pid = client.contexts.exec(sid, ctx, "echo $!")["stdout"].strip()
    sbx.files.write("/tmp/cache", "loaded")
    gen = client.get_sandbox(sid).runtime_generation
    print(f"   before pause(): GREETING=hello, `sleep 100000` is PID {pid}, /tmp/cache written")
    sbx.pause()
    print(f"   paused: state {sbx.state.value}, runtime_id "
          f"{client.get_sandbox(sid).runtime_id!r}")
    same = Sandbox.connect(sid)
    greeting = client.contexts.exec(sid, ctx, "echo $GREETING")["stdout"].strip()
    ps = client.contexts.exec(sid, ctx, "ps")["stdout"]
    alive = any(line.split()[:1] == [pid] and "sleep" in line for line in ps.splitlines())
    print(f"   after connect(): generation {gen} -> "
          f"{client.get_sandbox(sid).runtime_generation}")
    print(f"   echo $GREETING -> {greeting}; PID {pid} running: {alive}; "
          f"/tmp/cache -> {same.files.read('/tmp/cache')}")
    assert greeting == "hello" and alive and same.files.read("/tmp/cache") == "loaded"
    same.kill()

    block("List suspended sandboxes", LIST)
    block("Delete a suspended sandbox", DELETE)

    print("\n(setup: the document's placeholder id is a real sandbox here)")
    real = client.sandboxes.claim(ttl=300)
    TIMEOUT = TIMEOUT.replace("your-sandbox-id", real.id)
    block("Sandbox timeout", TIMEOUT)
    print("   expires_at now + 60 s:", client.get_sandbox(real.id).expires_at)

    auto = block("Auto pause", AUTO_PAUSE)["sandbox"]
    for round_ in (1, 2):
        backend.advance_clock(10 * 60 + 1)  # the manual clock: no real waiting
        backend.quiesce()
        print(f"   timeout {round_}: {auto.sandbox_id} is {auto.state.value}")
        auto = type(auto).connect(auto.sandbox_id, timeout=10 * 60)
        print(f"   connect -> {auto.state.value} (generation "
              f"{client.get_sandbox(auto.sandbox_id).runtime_generation})")
print("\nDONE")
