#!/usr/bin/env python3
"""Seed "Sandbox persistence" (UCloud style): every code block of the
document, verbatim but for the import name, on the embedded backend.

The facade's ``pause()`` is a memory pause, as the document says. The
embedded backend has no memory checkpoints yet, so that call raises
``UnavailableError`` (503, reason ``memory_unavailable``) and the blocks that
pause stop there: this script reports it and goes on. To give the "List
suspended sandboxes" block something to list, the setup pauses two
sandboxes filesystem-only through the client.

    PYTHONPATH=build/bindings/python python3 examples/python/ucloud_persistence.py [DATA_DIR]
"""
import sys

from libsandbox0 import LocalBackend, UnavailableError


def block(title, code):
    """Run one of the document's blocks; returns its variables."""
    print(f"\n== {title}")
    ns = {}
    try:
        exec(code, ns)
    except UnavailableError as e:
        if e.reason != "memory_unavailable":
            raise
        print(f"   -> pause() raised {type(e).__name__}({e.status_code} {e.code}, "
              f"reason {e.reason}): the local backend has no memory checkpoints yet")
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

    print("\n(setup: two sandboxes paused filesystem-only through the client)")
    for _ in range(2):
        sid = client.sandboxes.claim().id
        client.sandboxes.pause_and_wait(sid)
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
