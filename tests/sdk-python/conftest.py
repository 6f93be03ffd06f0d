"""Harness of the official Python SDK suite (tests/sdk-python).

One `s0 serve` per test module on a fresh data directory (listening on
127.0.0.1 port 0 with a known API key; ready once server.json names the
process and /healthz answers), the official `sandbox0.Client` pointed at it
with a recorder of every response the SDK receives, and plain httpx access
for what the SDK does not expose. The same approach as tests/sdk-js/helpers.mjs.
The executable comes from $S0_BIN.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import httpx
import pytest
from sandbox0 import Client

START_BUDGET_S = 30.0
STOP_BUDGET_S = 15.0


def until(what: str, budget_s: float, probe: Callable[[], Any], step_s: float = 0.02) -> Any:
    """Poll `probe` until it returns a truthy value or `budget_s` passes."""
    deadline = time.monotonic() + budget_s
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {budget_s} s waiting for {what}")
        time.sleep(step_s)


@dataclass
class Exchange:
    method: str
    path: str
    query: str
    status: int
    content_type: str
    body: Any


@dataclass
class Server:
    url: str
    token: str
    data: Path
    proc: subprocess.Popen
    root: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> int:
        """SIGTERM, wait (SIGKILL after the budget), remove the directory; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_BUDGET_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)
        return self.proc.returncode


def start_server(extra_args: tuple[str, ...] = ()) -> Server:
    binary = os.environ.get("S0_BIN")
    assert binary, "S0_BIN must name the s0 executable"
    root = tempfile.mkdtemp(prefix="s0-sdk-python-")
    data = Path(root) / "data"
    token = "s0_sdkpy" + secrets.token_hex(12)
    log_path = Path(root) / "serve.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [binary, "serve", "--data", str(data), "--listen", "127.0.0.1:0", "--token", token,
             "--quiet", "--runtime", "sim", *extra_args],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    server = Server(url="", token=token, data=data, proc=proc, root=root, log_path=log_path)
    try:
        def ready() -> Optional[dict]:
            if proc.poll() is not None:
                raise RuntimeError(f"s0 serve exited early ({proc.returncode}):\n{server.log()}")
            try:
                info = json.loads((data / "server.json").read_text())
            except (OSError, ValueError):
                return None  # not written yet
            return info if info.get("pid") == proc.pid else None

        info = until("server.json", START_BUDGET_S, ready)
        server.url = info["url"]
        health = httpx.get(server.url + "/healthz").json()
        assert health["success"] is True and health["data"]["status"] == "healthy"
        return server
    except BaseException:
        server.stop()
        raise


@dataclass
class Harness:
    """Everything a test needs: the server, the SDK client, the recorded wire, raw access."""

    server: Server
    sdk: Client
    seen: list[Exchange] = field(default_factory=list)
    tracked: set[str] = field(default_factory=set)

    def raw(self, method: str, path: str, *, body: Any = None, token: Optional[str] = "",
            headers: Optional[dict] = None) -> httpx.Response:
        """A plain request (JSON body when `body` is not bytes); token "" = the server's."""
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = f"Bearer {token or self.server.token}"
        kwargs: dict[str, Any] = {}
        if isinstance(body, (bytes, str)):
            kwargs["content"] = body
        elif body is not None:
            kwargs["json"] = body
        return httpx.request(method, self.server.url + path, headers=h, timeout=60, **kwargs)

    def state(self, sandbox_id: str) -> dict:
        """GET /api/v1/sandboxes/{id} → data (asserts 200)."""
        r = self.raw("GET", f"/api/v1/sandboxes/{sandbox_id}")
        assert r.status_code == 200, r.text
        return r.json()["data"]

    def track(self, sandbox_id: str) -> str:
        self.tracked.add(sandbox_id)
        return sandbox_id

    def claim(self, **kwargs: Any):
        """Claim "default" through the SDK; the sandbox is deleted after the test."""
        sb = self.sdk.sandboxes.claim("default", **kwargs)
        self.expect_last("POST", "/api/v1/sandboxes", 201)
        self.track(sb.id)
        return sb

    def cleanup(self) -> None:
        for sandbox_id in sorted(self.tracked):
            r = self.raw("DELETE", f"/api/v1/sandboxes/{sandbox_id}")
            assert r.status_code in (202, 404), f"cleanup delete {sandbox_id}: {r.text}"
        self.tracked.clear()

    def expect_last(self, method: str, path: str, status: int) -> Exchange:
        assert self.seen, "no response recorded"
        last = self.seen[-1]
        assert (last.method, last.path, last.status) == (method, path, status), last
        return last


def _recorder(seen: list[Exchange]) -> Callable[[httpx.Response], None]:
    def record(response: httpx.Response) -> None:
        response.read()  # the SDK reads it too; bytes are cached
        ctype = response.headers.get("content-type", "")
        body: Any = None
        if ctype.startswith("application/json"):
            body = json.loads(response.content)
        url = response.request.url
        seen.append(Exchange(response.request.method, url.path, url.query.decode(),
                             response.status_code, ctype, body))
    return record


@pytest.fixture(scope="module")
def server():
    s = start_server()
    yield s
    code = s.stop()
    assert code == 0, f"s0 serve did not stop cleanly ({code}):\n{s.log()}"


@pytest.fixture
def h(server: Server):
    """A fresh SDK client per test on the module's server; claimed sandboxes deleted after."""
    seen: list[Exchange] = []
    sdk = Client(token=server.token, base_url=server.url, timeout=60)
    hx = sdk.api.get_httpx_client()
    hooks = dict(hx.event_hooks)
    hooks["response"] = [_recorder(seen), *hooks.get("response", [])]
    hx.event_hooks = hooks
    harness = Harness(server=server, sdk=sdk, seen=seen)
    yield harness
    harness.cleanup()
    from wire import audit  # the wire each test made, held to the SDK's declarations

    audit(seen)
