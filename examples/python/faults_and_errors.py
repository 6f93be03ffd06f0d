#!/usr/bin/env python3
"""Failure modes on the embedded backend: fault points and the exceptions
they surface, a wait deadline, and a wait cancelled from another thread.

    PYTHONPATH=build/bindings/python python3 examples/python/faults_and_errors.py
"""
import threading

from libsandbox0 import (CancelToken, CanceledError, ConflictError, LocalBackend,
                         NotFoundError, SandboxWaitTimeoutError, UnavailableError)

with LocalBackend(manual_clock=True) as backend:
    client = backend.client()
    sb = client.sandboxes.claim()
    client.sandboxes.pause_and_wait(sb.id)

    # No compatible carrier: the resume fails and the sandbox stays paused.
    backend.arm_fault("carrier", count=1)
    try:
        client.sandboxes.resume_and_wait(sb.id)
    except UnavailableError as e:
        print("resume:", e)
        print("        retryable:", e.retryable, "| still paused:", client.get_sandbox(sb.id).paused)
    client.sandboxes.resume_and_wait(sb.id)

    # The node channel is down: the pause is accepted (202) but cannot finish.
    backend.arm_fault("node_channel", count=0)
    print("pause accepted with HTTP", client.sandboxes.pause(sb.id).http_status)
    try:
        client.sandboxes.pause_and_wait(sb.id, timeout_sec=30)  # virtual time: instant
    except SandboxWaitTimeoutError as e:
        print("wait:", e.message, "| last seen:", e.last_sandbox.status, e.last_sandbox.paused)

    token = CancelToken()
    threading.Timer(0.2, token.cancel).start()
    try:
        client.sandboxes.pause_and_wait(sb.id, timeout_sec=float("inf"), cancel=token)
    except CanceledError as e:
        print("cancelled from another thread:", e.message)
    backend.release_fault("node_channel")
    backend.quiesce()
    print("after the fault cleared:", client.get_sandbox(sb.id).status)

    try:
        client.sandboxes.restore(client.sandboxes.claim().id, "snap_missing")
    except (ConflictError, NotFoundError) as e:
        print("restore:", e)
    try:
        client.get_sandbox("sb_unknown")
    except NotFoundError as e:
        print("get:", e.status_code, e.code, e.request_id)
print("DONE")
