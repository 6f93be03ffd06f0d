"""`s0 serve --run-limit SECONDS` (UC-14, docs/decisions.md "Continuous-run
limit") through the official Python SDK, on the server's manual clock."""
from __future__ import annotations

import os
import subprocess

import httpx
from sandbox0 import Client
from sandbox0.apispec.models.sandbox_config import SandboxConfig
from sandbox0.apispec.models.sandbox_lifecycle_status import SandboxLifecycleStatus

from conftest import start_server

HOUR = 3600


def advance(server, seconds: int) -> None:
    r = httpx.post(server.url + "/admin/v1/clock", json={"advance_ms": seconds * 1000},
                   headers={"Authorization": f"Bearer {server.token}"}, timeout=30)
    assert r.status_code == 200, r.text


def test_uc14_run_limit_pauses_a_long_run():
    server = start_server(("--manual-clock", "--run-limit", str(2 * HOUR)))
    try:
        sdk = Client(token=server.token, base_url=server.url, timeout=60)
        sb = sdk.sandboxes.claim("default", config=SandboxConfig(ttl=10 * HOUR))
        gen = sdk.sandboxes.get(sb.id).runtime_generation
        advance(server, 2 * HOUR - 1)
        assert sdk.sandboxes.get(sb.id).status == SandboxLifecycleStatus.RUNNING
        advance(server, 1)
        paused = sdk.sandboxes.wait_for_lifecycle(
            sb.id, lambda s: s.status == SandboxLifecycleStatus.PAUSED and s.paused,
            timeout_sec=60, poll_interval_sec=0.05)
        assert paused.runtime_id == ""
        resumed = sdk.sandboxes.resume_and_wait(sb.id, timeout_sec=60, poll_interval_sec=0.05)
        assert resumed.runtime_generation == gen + 1
        advance(server, HOUR)  # the count started again at the resume
        assert sdk.sandboxes.get(sb.id).status == SandboxLifecycleStatus.RUNNING
        sdk.sandboxes.delete(sb.id)
    finally:
        assert server.stop() == 0, server.log()


def test_run_limit_bad_values_are_usage_errors():
    for bad in ("-1", "soon"):
        r = subprocess.run([os.environ["S0_BIN"], "serve", "--run-limit", bad, "--data",
                            "/nonexistent/never-made"], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2, (bad, r.returncode, r.stderr)
        assert "run-limit" in r.stderr, r.stderr
        assert not os.path.exists("/nonexistent/never-made")
