"""Per-user local server discovery (docs/decisions.md) and the facade's choice of API."""
from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path

import libsandbox0 as s0
from libsandbox0 import facade, localserver

from _support import ScriptedServer, ok

FAKE_S0 = textwrap.dedent('''\
    #!{python}
    # A stand-in for `s0 serve --data DIR --listen 127.0.0.1:0`: answers the
    # list endpoint and publishes DIR/server.json once it listens.
    import http.server, json, os, sys
    assert sys.argv[1:3] == ["serve", "--data"], sys.argv
    d = sys.argv[3]
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({{"success": True, "data": {{"sandboxes": [], "count": 0,
                                                           "has_more": False}}}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a):
            pass
    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    tmp = os.path.join(d, "server.json.tmp")
    with open(tmp, "w") as f:
        json.dump({{"base_url": "http://127.0.0.1:%d" % srv.server_address[1],
                   "pid": os.getpid()}}, f)
    os.rename(tmp, os.path.join(d, "server.json"))
    srv.serve_forever()
''')


class Discovery(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="s0py-serve-"))
        self.env = {k: os.environ.get(k) for k in ("S0_DATA_DIR", "S0_BIN", "SANDBOX0_BASE_URL",
                                                   "SANDBOX0_TOKEN", "SANDBOX0_API_KEY", "PATH")}
        for k in ("SANDBOX0_BASE_URL", "SANDBOX0_TOKEN", "SANDBOX0_API_KEY", "S0_BIN"):
            os.environ.pop(k, None)
        os.environ["S0_DATA_DIR"] = str(self.dir / "data")
        self.pids = []

    def tearDown(self) -> None:
        addr = localserver.read_address()
        if addr is not None and addr.pid:
            try:
                os.kill(addr.pid, 9)
            except OSError:
                pass
        for k, v in self.env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        facade._auto_client = None
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_default_data_dir(self) -> None:
        self.assertEqual(localserver.default_data_dir(), self.dir / "data")
        os.environ.pop("S0_DATA_DIR")
        os.environ["XDG_DATA_HOME"] = str(self.dir)
        try:
            self.assertEqual(localserver.default_data_dir(), self.dir / "sandbox0")
        finally:
            os.environ.pop("XDG_DATA_HOME")

    def test_address_file_forms(self) -> None:
        d = self.dir / "data"
        d.mkdir()
        self.assertIsNone(localserver.read_address())
        (d / "server.json").write_text(json.dumps({"base_url": "http://127.0.0.1:9",
                                                   "token": "s0_k", "pid": 123}))
        a = localserver.read_address()
        self.assertEqual((a.base_url, a.token, a.pid), ("http://127.0.0.1:9", "s0_k", 123))
        (d / "server.json").write_text("http://127.0.0.1:9\n")
        self.assertEqual(localserver.read_address().base_url, "http://127.0.0.1:9")
        self.assertFalse(localserver.is_alive(localserver.read_address()))
        with ScriptedServer([(200, {}, ok({}))]) as srv:
            self.assertTrue(localserver.is_alive(localserver.ServerAddress(srv.base_url)))
            self.assertFalse(localserver.is_alive(localserver.ServerAddress(srv.base_url,
                                                                            pid=2**22 + 1)))

    def test_no_s0_program(self) -> None:
        os.environ["PATH"] = str(self.dir)  # nothing named s0
        with self.assertRaises(s0.Sandbox0Error) as cm:
            facade.default_client()
        self.assertEqual(cm.exception.reason, "local_server_unavailable")
        self.assertIn("SANDBOX0_BASE_URL", cm.exception.message)

    def test_starts_s0_serve_and_uses_it(self) -> None:
        prog = self.dir / "s0"
        prog.write_text(FAKE_S0.format(python=sys.executable))
        prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
        os.environ["PATH"] = f"{self.dir}{os.pathsep}{os.environ.get('PATH', '')}"
        t0 = time.monotonic()
        paginator = s0.Sandbox.list()  # no API configured: the per-user server
        self.assertEqual(paginator.next_items(), [])
        self.assertLess(time.monotonic() - t0, 15)
        addr = localserver.read_address()
        self.assertTrue(localserver.is_alive(addr))
        self.assertTrue((self.dir / "data" / "server.log").exists())
        # a second lookup reuses the live server
        self.assertEqual(localserver.ensure_server(start=False), addr)

    def test_environment_wins(self) -> None:
        with ScriptedServer([(200, {}, ok({"sandboxes": [], "count": 0,
                                            "has_more": False}))]) as srv:
            os.environ["SANDBOX0_BASE_URL"] = srv.base_url
            os.environ["SANDBOX0_TOKEN"] = "s0_env"
            facade._auto_client = None
            self.assertEqual(s0.Sandbox.list().next_items(), [])
            self.assertEqual(srv.requests[0][2]["Authorization"], "Bearer s0_env")
            self.assertTrue(srv.requests[0][1].startswith("/api/v1/sandboxes?"))


if __name__ == "__main__":
    unittest.main()
