"""A NUL inside a str argument must not reach C, where it would cut the path,
id, token or body ("sb_x\\x00junk" would name sandbox "sb_x", a path
"/workspace/a\\x00/../x" /workspace/a). Every such argument raises the
package's InvalidArgumentError (reason ``invalid_argument``, a ValueError and
a Sandbox0Error, as for every other bad argument; the Go binding's
ErrInvalidArgument) before any request, naming the parameter and never
echoing the value. Checked once at the SWIG boundary (sandbox0.i,
s0py_cstr / s0py_strv_from). Bytes payloads keep their NUL bytes."""
from __future__ import annotations

import unittest
from typing import Any, Callable, Optional

import libsandbox0 as s0
from libsandbox0 import capi, errors

from _support import BackendCase, ScriptedServer, SANDBOX_JSON, ok


class NulAsserts(unittest.TestCase):
    def assertNul(self, param: Optional[str], fn: Callable[..., Any], *a: Any,
                  **kw: Any) -> errors.InvalidArgumentError:
        """fn(*a, **kw) raises InvalidArgumentError for a NUL in `param`."""
        with self.assertRaises(errors.InvalidArgumentError) as cm:
            fn(*a, **kw)
        e = cm.exception
        self.assertIsInstance(e, ValueError)
        self.assertIsInstance(e, errors.Sandbox0Error)
        self.assertEqual(e.reason, "invalid_argument")
        self.assertEqual(e.code, "invalid_argument")
        self.assertIsNone(e.status_code)
        self.assertIn("contains a NUL character", e.message)
        if param is not None:
            self.assertTrue(e.message.startswith(param + " "), e.message)
        return e


class EmbeddedNul(BackendCase, NulAsserts):
    def test_file_paths(self) -> None:
        sb = self.claim()
        f = self.client.files
        f.write(sb.id, "/workspace/a.txt", b"original")
        f.mkdir(sb.id, "/workspace/keep")
        f.write(sb.id, "/workspace/keep/x", b"kept")
        # the truncated path would be /workspace/x: it must not be written
        self.assertNul("path", f.write, sb.id, "/workspace/x\x00/../../etc/passwd", b"X")
        self.assertFalse(f.exists(sb.id, "/workspace/x"))
        self.assertNul("path", f.write, sb.id, "/workspace/a.txt\x00.bak", b"X")
        self.assertEqual(f.read(sb.id, "/workspace/a.txt"), b"original")
        self.assertNul("path", f.delete, sb.id, "/workspace/keep\x00/x")
        self.assertEqual(f.read(sb.id, "/workspace/keep/x"), b"kept")
        self.assertNul("path", f.read, sb.id, "/workspace/a.txt\x00")
        self.assertNul("path", f.stat, sb.id, "/workspace/a.txt\x00")
        self.assertNul("path", f.list, sb.id, "/workspace\x00/keep")
        self.assertNul("path", f.mkdir, sb.id, "/workspace/n\x00ew", recursive=True)
        self.assertNul("path", f.exists, sb.id, "/workspace/a.txt\x00")
        self.assertNul("source", f.move, sb.id, "/workspace/a.txt\x00", "/workspace/b.txt")
        self.assertNul("destination", f.move, sb.id, "/workspace/a.txt", "/workspace/b.txt\x00")
        self.assertEqual(f.read(sb.id, "/workspace/a.txt"), b"original")
        self.assertFalse(f.exists(sb.id, "/workspace/b.txt"))
        # NUL in the data (bytes, bytearray, memoryview) is content, not a terminator.
        f.write(sb.id, "/workspace/nul.bin", b"a\x00b")
        self.assertEqual(f.read(sb.id, "/workspace/nul.bin"), b"a\x00b")
        f.write(sb.id, "/workspace/nul.bin", memoryview(bytearray(b"\x00\x00c\x00")))
        self.assertEqual(f.read(sb.id, "/workspace/nul.bin"), b"\x00\x00c\x00")
        self.client.sandboxes.delete(sb.id)

    def test_sandbox_and_snapshot_ids(self) -> None:
        sb = self.claim()
        bad = sb.id + "\x00junk"
        self.assertNul("sandbox_id", self.client.get_sandbox, bad)
        self.assertNul("sandbox_id", self.client.sandboxes.status, bad)
        self.assertNul("sandbox_id", self.client.sandboxes.update, bad, ttl=60)
        self.assertNul("sandbox_id", self.client.sandboxes.pause, bad)
        self.assertNul("sandbox_id", self.client.sandboxes.delete, bad)
        self.assertNul("snapshot_id", self.client.snapshots.get, "snap\x00x")
        self.assertNul("name", self.client.snapshots.create, sb.id, name="n\x00ame")
        self.assertNul("snapshot_id", self.client.sandboxes.restore, sb.id, "snap\x00x")
        # Nothing happened to the sandbox the truncated id names.
        self.assertEqual(self.client.sandboxes.status(sb.id).status, "running")
        self.client.sandboxes.delete(sb.id)

    def test_template_names_and_claim_strings(self) -> None:
        self.assertNul("template_id", self.client.sandboxes.claim, "default\x00x")
        self.assertNul("snapshot_id", self.client.sandboxes.claim, "default", snapshot_id="s\x00")
        self.assertNul("memory", self.client.sandboxes.claim, "default", memory="512Mi\x00")
        self.assertNul("env_vars[0]", self.client.sandboxes.claim, "default",
                       env_vars={"A": "1\x002"})
        self.assertNul("template_id", self.client.sandboxes.list, template_id="default\x00x")
        self.assertNul("name", self.backend.build_template, "tpl\x00x")
        self.assertNul("ephemeral_mounts[1]", self.backend.build_template, "tpl",
                       ephemeral_mounts=["/tmp", "/tmp\x00/x"])
        self.assertEqual(self.client.sandboxes.list(template_id="default").sandboxes, [])

    def test_context_data(self) -> None:
        sb = self.claim()
        ctx = self.client.contexts.create(sb.id)
        self.assertNul("input", self.client.contexts.exec, sb.id, ctx["id"], "echo a\x00; echo b")
        self.assertNul("context_id", self.client.contexts.exec, sb.id, ctx["id"] + "\x00x",
                       "echo a")
        self.assertNul("context_id", self.client.contexts.get, sb.id, ctx["id"] + "\x00")
        self.assertNul("sandbox_id", self.client.contexts.delete, sb.id + "\x00", ctx["id"])
        self.assertNul("suffix", self.client.contexts.call, "GET", sb.id, "/contexts\x00/x")
        self.assertNul("method", self.client.contexts.call, "GET\x00", sb.id, "/contexts")
        self.assertNul("idempotency_key", self.client.contexts.call, "POST", sb.id, "/contexts",
                       {}, idempotency_key="k\x00")
        # A NUL inside JSON fields is escaped by json.dumps, so it is data.
        out = self.client.contexts.exec(sb.id, ctx["id"], "echo ok")
        self.assertIn("ok", out["stdout"])
        self.client.sandboxes.delete(sb.id)


class OverHTTP(NulAsserts):
    """A client of a loopback server: the refused calls send no request."""

    def test_no_request_sent(self) -> None:
        with ScriptedServer([(200, {}, ok(SANDBOX_JSON))]) as srv:
            c = s0.Client(token="s0_tok", base_url=srv.base_url)
            try:
                self.assertNul("sandbox_id", c.get_sandbox, "sb_fake\x00junk")
                self.assertNul("sandbox_id", c.sandboxes.delete, "sb_fake\x00junk")
                self.assertNul("path", c.files.write, "sb_fake",
                               "/workspace/x\x00/../../etc/passwd", b"x")
                self.assertNul("input", c.contexts.exec, "sb_fake", "ctx_1", "a\x00b")
                self.assertEqual(srv.requests, [])
                # the same client still works
                self.assertEqual(c.get_sandbox("sb_fake").id, "sb_fake")
                self.assertEqual(len(srv.requests), 1)
                self.assertTrue(srv.requests[0][1].endswith("/sandboxes/sb_fake"), srv.requests)
            finally:
                c.close()


class ClientStrings(NulAsserts):
    def test_tokens_and_options(self) -> None:
        url = "http://127.0.0.1:9"
        e = self.assertNul("token", s0.Client, token="s0_secret\x00def", base_url=url)
        self.assertNotIn("secret", str(e))
        self.assertNotIn("secret", repr(e))
        self.assertNul("base_url", s0.Client, base_url=url + "\x00/evil")
        self.assertNul("user_agent", s0.Client, base_url=url, user_agent="ua\x00")
        self.assertNul("team_id", s0.Client, base_url=url, team_id="t\x00")
        self.assertNul("ca_file", s0.Client, base_url=url, ca_file="/etc/ca\x00.pem")
        self.assertNul("proxy", s0.Client, base_url=url, proxy="http://p\x00")
        e = self.assertNul("headers[1]", s0.Client, base_url=url,
                           headers={"X-A": "1", "X-B": "hidden\x00"})
        self.assertNotIn("hidden", str(e))
        self.assertNul("headers[0]", s0.Client, base_url=url, headers=["X-A: 1\x00"])
        self.assertNul("data_dir", s0.LocalBackend, "/tmp/s0py-nul\x00x")
        s0.Client(token="s0_abc", base_url=url).close()

    def test_non_str_still_type_error(self) -> None:
        with self.assertRaises(TypeError):
            capi.status_from_name(b"running")  # type: ignore[arg-type]
        self.assertNul("name", capi.status_from_name, "running\x00")


if __name__ == "__main__":
    unittest.main()
