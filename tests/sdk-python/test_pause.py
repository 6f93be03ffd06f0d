"""Filesystem and memory pause/resume through the official Python SDK's wait
helpers (docs/wire.md §3.7, §6), and concurrent memory pauses joining one
durable operation over HTTP (PTX-07)."""
from __future__ import annotations

import threading

import pytest
from sandbox0 import APIError
from sandbox0.apispec.models.sandbox_lifecycle_status import SandboxLifecycleStatus

from conftest import start_server

SB = "/api/v1/sandboxes"
WAIT = dict(timeout_sec=60, poll_interval_sec=0.05)


def test_filesystem_pause_resume(h):
    sb = h.claim()
    sb.write_file("/workspace/kept.txt", b"workspace")
    sb.write_file("/tmp/gone.txt", b"tmpfs")
    gen = h.state(sb.id)["runtime_generation"]

    paused = h.sdk.sandboxes.pause_and_wait(sb.id, **WAIT)
    assert [x.status for x in h.seen if x.path.endswith("/pause")][0] in (200, 202)
    assert paused.status == SandboxLifecycleStatus.PAUSED and paused.paused
    assert paused.runtime_id == ""  # empty while paused

    resumed = h.sdk.sandboxes.resume_and_wait(sb.id, **WAIT)
    assert resumed.status == SandboxLifecycleStatus.RUNNING and not resumed.paused
    assert resumed.runtime_generation == gen + 1
    assert resumed.runtime_id and resumed.runtime_id != sb.runtime_id
    assert sb.read_file("/workspace/kept.txt") == b"workspace"
    assert "gone.txt" not in {e.name for e in sb.list_files("/tmp")}


def test_memory_pause_resume_keeps_tmp(h):
    sb = h.claim()
    sb.write_file("/tmp/kept.txt", b"runtime tmpfs")
    sb.write_file("/workspace/w.txt", b"workspace")
    gen = h.state(sb.id)["runtime_generation"]

    paused = h.sdk.sandboxes.pause_and_wait(sb.id, memory=True, **WAIT)
    assert paused.status == SandboxLifecycleStatus.PAUSED and paused.paused
    resumed = h.sdk.sandboxes.resume_and_wait(sb.id, memory=True, **WAIT)
    h.expect_last("GET", f"{SB}/{sb.id}", 200)
    assert resumed.runtime_generation == gen + 1
    assert sb.read_file("/tmp/kept.txt") == b"runtime tmpfs"  # the memory image came back
    assert sb.read_file("/workspace/w.txt") == b"workspace"


def test_pause_of_paused_sandbox_answers_paused(h):
    sb = h.claim()
    h.sdk.sandboxes.pause_and_wait(sb.id, **WAIT)
    again = h.sdk.sandboxes.pause(sb.id)
    h.expect_last("POST", f"{SB}/{sb.id}/pause", 200)
    assert again.paused is True
    assert again.status == SandboxLifecycleStatus.PAUSED


@pytest.fixture(scope="module")
def admin_server():
    """A second server with the admin endpoints, to hold a publication."""
    s = start_server(("--enable-admin",))
    yield s
    assert s.stop() == 0, s.log()


def test_ptx07_concurrent_memory_pauses_join_over_http(h, admin_server):
    """PTX-07 over HTTP: 32 SDK pauses with memory=True at once, many rounds;
    each answers success with the same operation_id, none is a 409."""
    from sandbox0 import Client

    sdk = Client(token=admin_server.token, base_url=admin_server.url, timeout=60)
    sb = sdk.sandboxes.claim("default")
    fault = {"name": "object_store@after-seal"}
    admin = dict(headers={"Authorization": f"Bearer {admin_server.token}"}, timeout=30)
    import httpx

    try:
        for _ in range(5):
            r = httpx.post(admin_server.url + "/admin/v1/faults", json={**fault, "mode": "hold"},
                           **admin)
            assert r.status_code == 200, r.text
            start = threading.Barrier(32)
            answers: list = [None] * 32

            def pause(i: int) -> None:
                start.wait()
                try:
                    answers[i] = sdk.sandboxes.pause(sb.id, memory=True)
                except APIError as e:  # recorded, asserted below
                    answers[i] = e

            threads = [threading.Thread(target=pause, args=(i,)) for i in range(32)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            errors = [a for a in answers if isinstance(a, APIError)]
            assert not errors, errors[0]
            ops = {a.additional_properties.get("operation_id") for a in answers}
            assert len(ops) == 1 and None not in ops, ops
            r = httpx.request("DELETE", admin_server.url + "/admin/v1/faults", json=fault, **admin)
            assert r.status_code == 200, r.text
            sdk.sandboxes.wait_for_lifecycle(
                sb.id, lambda s: s.status == SandboxLifecycleStatus.PAUSED and s.paused, **WAIT)
            sdk.sandboxes.resume_and_wait(sb.id, memory=True, **WAIT)
    finally:
        httpx.request("DELETE", admin_server.url + "/admin/v1/faults", json=fault, **admin)
        sdk.sandboxes.delete(sb.id)


def test_ptx07_memory_pause_over_filesystem_pause_is_409(h, admin_server):
    """The mixed case (docs/decisions.md "Concurrent pauses") as the SDK
    surfaces it: a filesystem-only pause in flight is joined by another
    filesystem-only one, and a memory pause gets the declared 409."""
    from sandbox0 import Client
    import httpx

    sdk = Client(token=admin_server.token, base_url=admin_server.url, timeout=60)
    sb = sdk.sandboxes.claim("default")
    fault = {"name": "object_store@after-seal"}
    admin = dict(headers={"Authorization": f"Bearer {admin_server.token}"}, timeout=30)
    try:
        r = httpx.post(admin_server.url + "/admin/v1/faults", json={**fault, "mode": "hold"},
                       **admin)
        assert r.status_code == 200, r.text
        first = sdk.sandboxes.pause(sb.id)
        again = sdk.sandboxes.pause(sb.id, memory=False)
        op = first.additional_properties["operation_id"]
        assert again.additional_properties["operation_id"] == op
        with pytest.raises(APIError) as e:
            sdk.sandboxes.pause(sb.id, memory=True)
        assert (e.value.status_code, e.value.code) == (409, "conflict")
        assert "conflicts with another lifecycle operation" in e.value.message
    finally:
        httpx.request("DELETE", admin_server.url + "/admin/v1/faults", json=fault, **admin)
    sdk.sandboxes.wait_for_lifecycle(
        sb.id, lambda s: s.status == SandboxLifecycleStatus.PAUSED and s.paused, **WAIT)
    sdk.sandboxes.delete(sb.id)
