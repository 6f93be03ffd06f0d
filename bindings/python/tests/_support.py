"""Shared test helpers: backends, a scripted HTTP server, row markers."""
from __future__ import annotations

import http.server
import json
import os
import shutil
import tempfile
import threading
import unittest
from typing import Any, Callable, Dict, List, Optional, Tuple

import libsandbox0 as s0

EXAMPLES_DIR = os.environ.get("S0_PY_EXAMPLES") or os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "examples", "python")


class BackendCase(unittest.TestCase):
    """One embedded backend per test class (manual clock: waits are virtual)."""

    manual_clock = True
    backend_kwargs: Dict[str, Any] = {}

    @classmethod
    def setUpClass(cls) -> None:
        cls.dir = tempfile.mkdtemp(prefix="s0py-test-")
        cls.backend = s0.LocalBackend(cls.dir, manual_clock=cls.manual_clock, **cls.backend_kwargs)
        cls.client = cls.backend.client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.backend.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def claim(self, **kw: Any) -> s0.SandboxDetails:
        return self.client.sandboxes.claim(**kw)

    def settle(self) -> None:
        self.backend.quiesce(20)


class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers from server.script: a list of (status, headers, body) popped in
    order (the last one repeats); records (method, path, headers, body)."""

    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        srv = self.server
        with srv.lock:  # type: ignore[attr-defined]
            srv.requests.append((self.command, self.path, dict(self.headers), body))  # type: ignore[attr-defined]
            script = srv.script  # type: ignore[attr-defined]
            status, headers, payload = script.pop(0) if len(script) > 1 else script[0]
        if isinstance(payload, (dict, list)):
            payload = json.dumps(payload).encode()
        elif isinstance(payload, str):
            payload = payload.encode()
        self.send_response(status)
        hdrs = {"Content-Type": "application/json"}
        hdrs.update(headers)
        for k, v in hdrs.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *a: Any) -> None:
        pass


class ScriptedServer:
    """A loopback HTTP server with a scripted answer list (for wire errors
    the local backend does not produce)."""

    def __init__(self, script: List[Tuple[int, Dict[str, str], Any]]) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        self.httpd.daemon_threads = True
        self.httpd.script = list(script)  # type: ignore[attr-defined]
        self.httpd.requests = []  # type: ignore[attr-defined]
        self.httpd.lock = threading.Lock()  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def requests(self) -> List[Tuple[str, str, Dict[str, str], bytes]]:
        return self.httpd.requests  # type: ignore[attr-defined]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "ScriptedServer":
        return self

    def __exit__(self, *a: Any) -> None:
        self.close()


def envelope_error(code: str, message: str, details: Any = None) -> Dict[str, Any]:
    err: Dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        err["details"] = details
    return {"success": False, "error": err}


SANDBOX_JSON = {
    "id": "sb_fake", "template_id": "default", "team_id": "t", "status": "running",
    "paused": False, "auto_resume": True, "pod_name": "p", "runtime_id": "rt_1",
    "runtime_generation": 1, "expires_at": None, "hard_expires_at": None,
    "claimed_at": "2026-01-01T00:00:00Z", "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
}


def ok(data: Any) -> Dict[str, Any]:
    return {"success": True, "data": data}
