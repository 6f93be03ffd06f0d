"""Claim, get, status, list with filters, refresh, update and delete through
the official Python SDK against `s0 serve` (docs/wire.md §3.1–§3.7)."""
from __future__ import annotations

import pytest
from sandbox0 import APIError
from sandbox0.apispec.models.sandbox_config import SandboxConfig
from sandbox0.apispec.models.sandbox_lifecycle_status import SandboxLifecycleStatus
from sandbox0.apispec.models.sandbox_refresh_request import SandboxRefreshRequest
from sandbox0.apispec.models.sandbox_update_config import SandboxUpdateConfig
from sandbox0.apispec.models.sandbox_update_request import SandboxUpdateRequest
from sandbox0.apispec.models.success_message_response import SuccessMessageResponse

SB = "/api/v1/sandboxes"


def test_claim_get_status_delete(h):
    sb = h.claim()
    assert sb.id.startswith("sb")
    assert sb.template == "default"
    assert sb.status == "running"
    assert sb.runtime_id

    got = h.sdk.sandboxes.get(sb.id)
    h.expect_last("GET", f"{SB}/{sb.id}", 200)
    wire = h.state(sb.id)
    assert got.id == wire["id"] == sb.id
    assert got.template_id == "default"
    assert got.team_id == wire["team_id"]
    assert got.status == SandboxLifecycleStatus.RUNNING
    assert got.paused is False
    assert got.auto_resume is True
    assert got.runtime_id == sb.runtime_id
    assert got.runtime_generation == wire["runtime_generation"]
    assert got.expires_at is None and got.hard_expires_at is None  # unset expiries are null

    st = h.sdk.sandboxes.status(sb.id)
    h.expect_last("GET", f"{SB}/{sb.id}/status", 200)
    assert st.sandbox_id == sb.id
    assert st.status == SandboxLifecycleStatus.RUNNING

    # DELETE answers 202 as the SDK declares (issue #19: 200 raised APIError)
    done = h.sdk.sandboxes.delete(sb.id)
    h.expect_last("DELETE", f"{SB}/{sb.id}", 202)
    assert isinstance(done, SuccessMessageResponse)
    with pytest.raises(APIError) as e:
        h.sdk.sandboxes.get(sb.id)
    assert (e.value.status_code, e.value.code) == (404, "not_found")


def test_claim_with_config_ttl_and_memory(h):
    sb = h.claim(config=SandboxConfig(ttl=600, hard_ttl=3600, auto_resume=False), memory="512Mi")
    got = h.sdk.sandboxes.get(sb.id)
    assert got.auto_resume is False
    assert got.expires_at is not None and got.hard_expires_at is not None
    assert got.hard_expires_at > got.expires_at
    assert got.resources.memory == "512Mi"


def test_list_with_filters(h):
    a = h.claim()
    b = h.claim()
    h.sdk.sandboxes.pause_and_wait(b.id, timeout_sec=60, poll_interval_sec=0.05)

    every = h.sdk.sandboxes.list()
    h.expect_last("GET", SB, 200)
    ids = [s.id for s in every]
    assert a.id in ids and b.id in ids
    assert ids.index(b.id) < ids.index(a.id)  # newest first

    paused = h.sdk.sandboxes.list(status="paused")
    assert "status=paused" in h.seen[-1].query
    assert b.id in [s.id for s in paused] and a.id not in [s.id for s in paused]
    assert all(s.status == SandboxLifecycleStatus.PAUSED and s.paused for s in paused)

    running = h.sdk.sandboxes.list(paused=False)
    assert "paused=false" in h.seen[-1].query
    assert a.id in [s.id for s in running] and b.id not in [s.id for s in running]

    by_template = h.sdk.sandboxes.list(template_id="default")
    assert {a.id, b.id} <= {s.id for s in by_template}
    assert h.sdk.sandboxes.list(template_id="no-such-template") == []

    one = h.sdk.sandboxes.list(limit=1)
    assert [s.id for s in one] == [ids[0]]
    rest = h.sdk.sandboxes.list(limit=1, offset=1)
    assert [s.id for s in rest] == [ids[1]]

    with pytest.raises(APIError) as e:  # limit past 200: a declared 400
        h.sdk.sandboxes.list(limit=500)
    assert (e.value.status_code, e.value.code) == (400, "bad_request")


def test_refresh_and_update(h):
    sb = h.claim(config=SandboxConfig(ttl=60))
    before = h.sdk.sandboxes.get(sb.id).expires_at
    r = h.sdk.sandboxes.refresh(sb.id, SandboxRefreshRequest(duration=3600))
    h.expect_last("POST", f"{SB}/{sb.id}/refresh", 200)
    assert r.sandbox_id == sb.id
    assert r.expires_at > before

    updated = h.sdk.sandboxes.update(sb.id, SandboxUpdateRequest(config=SandboxUpdateConfig(ttl=0)))
    h.expect_last("PUT", f"{SB}/{sb.id}", 200)
    assert updated.id == sb.id
    assert updated.expires_at is None  # ttl 0 clears the soft deadline
