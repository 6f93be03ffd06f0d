"""A NUL inside a str argument must not reach C (where it would truncate the
path or id): every string argument raises ValueError("embedded null
character"), like CPython's os functions. Checked once at the SWIG boundary
(sandbox0.i, s0py_cstr / s0py_strv_from)."""
from __future__ import annotations

import unittest

import libsandbox0 as s0
from libsandbox0 import capi

from _support import BackendCase

NUL = "embedded null character"


class EmbeddedNul(BackendCase):
    def assertNul(self, fn, *a, **kw) -> None:  # type: ignore[no-untyped-def]
        with self.assertRaises(ValueError) as cm:
            fn(*a, **kw)
        self.assertEqual(str(cm.exception), NUL)

    def test_file_paths(self) -> None:
        sb = self.claim()
        f = self.client.files
        f.write(sb.id, "/workspace/a.txt", b"original")
        f.mkdir(sb.id, "/workspace/keep")
        f.write(sb.id, "/workspace/keep/x", b"kept")
        self.assertNul(f.write, sb.id, "/workspace/a.txt\x00.bak", b"X")
        self.assertEqual(f.read(sb.id, "/workspace/a.txt"), b"original")
        self.assertNul(f.delete, sb.id, "/workspace/keep\x00/x")
        self.assertEqual(f.read(sb.id, "/workspace/keep/x"), b"kept")
        self.assertNul(f.read, sb.id, "/workspace/a.txt\x00")
        self.assertNul(f.stat, sb.id, "/workspace/a.txt\x00")
        self.assertNul(f.list, sb.id, "/workspace\x00/keep")
        self.assertNul(f.mkdir, sb.id, "/workspace/n\x00ew", recursive=True)
        self.assertNul(f.exists, sb.id, "/workspace/a.txt\x00")
        self.assertNul(f.move, sb.id, "/workspace/a.txt\x00", "/workspace/b.txt")
        self.assertNul(f.move, sb.id, "/workspace/a.txt", "/workspace/b.txt\x00")
        self.assertEqual(f.read(sb.id, "/workspace/a.txt"), b"original")
        self.assertFalse(f.exists(sb.id, "/workspace/b.txt"))
        # NUL in the data (bytes) is content, not a terminator.
        f.write(sb.id, "/workspace/nul.bin", b"a\x00b")
        self.assertEqual(f.read(sb.id, "/workspace/nul.bin"), b"a\x00b")
        self.client.sandboxes.delete(sb.id)

    def test_sandbox_and_snapshot_ids(self) -> None:
        sb = self.claim()
        bad = sb.id + "\x00junk"
        self.assertNul(self.client.get_sandbox, bad)
        self.assertNul(self.client.sandboxes.status, bad)
        self.assertNul(self.client.sandboxes.update, bad, ttl=60)
        self.assertNul(self.client.sandboxes.pause, bad)
        self.assertNul(self.client.sandboxes.delete, bad)
        self.assertNul(self.client.snapshots.get, "snap\x00x")
        self.assertNul(self.client.snapshots.create, sb.id, name="n\x00ame")
        self.assertNul(self.client.sandboxes.restore, sb.id, "snap\x00x")
        # Nothing happened to the sandbox.
        self.assertEqual(self.client.sandboxes.status(sb.id).status, "running")
        self.client.sandboxes.delete(sb.id)

    def test_template_names_and_claim_strings(self) -> None:
        self.assertNul(self.client.sandboxes.claim, "default\x00x")
        self.assertNul(self.client.sandboxes.claim, "default", snapshot_id="s\x00")
        self.assertNul(self.client.sandboxes.claim, "default", memory="512Mi\x00")
        self.assertNul(self.client.sandboxes.claim, "default", env_vars={"A": "1\x002"})
        self.assertNul(self.client.sandboxes.list, template_id="default\x00x")
        self.assertNul(self.backend.build_template, "tpl\x00x")
        self.assertNul(self.backend.build_template, "tpl", ephemeral_mounts=["/tmp\x00/x"])
        self.assertEqual(self.client.sandboxes.list(template_id="default").sandboxes, [])

    def test_context_data(self) -> None:
        sb = self.claim()
        ctx = self.client.contexts.create(sb.id)
        self.assertNul(self.client.contexts.exec, sb.id, ctx["id"], "echo a\x00; echo b")
        self.assertNul(self.client.contexts.exec, sb.id, ctx["id"] + "\x00x", "echo a")
        self.assertNul(self.client.contexts.get, sb.id, ctx["id"] + "\x00")
        self.assertNul(self.client.contexts.delete, sb.id + "\x00", ctx["id"])
        self.assertNul(self.client.contexts.call, "GET", sb.id, "/contexts\x00/x")
        self.assertNul(self.client.contexts.call, "GET\x00", sb.id, "/contexts")
        self.assertNul(self.client.contexts.call, "POST", sb.id, "/contexts", {},
                       idempotency_key="k\x00")
        # A NUL inside JSON fields is escaped by json.dumps, so it is data.
        out = self.client.contexts.exec(sb.id, ctx["id"], "echo ok")
        self.assertIn("ok", out["stdout"])
        self.client.sandboxes.delete(sb.id)


class ClientStrings(unittest.TestCase):
    def assertNul(self, fn, *a, **kw) -> None:  # type: ignore[no-untyped-def]
        with self.assertRaises(ValueError) as cm:
            fn(*a, **kw)
        self.assertEqual(str(cm.exception), NUL)

    def test_tokens_and_options(self) -> None:
        url = "http://127.0.0.1:9"
        self.assertNul(s0.Client, token="s0_abc\x00def", base_url=url)
        self.assertNul(s0.Client, base_url=url + "\x00/evil")
        self.assertNul(s0.Client, base_url=url, user_agent="ua\x00")
        self.assertNul(s0.Client, base_url=url, team_id="t\x00")
        self.assertNul(s0.Client, base_url=url, ca_file="/etc/ca\x00.pem")
        self.assertNul(s0.Client, base_url=url, proxy="http://p\x00")
        self.assertNul(s0.Client, base_url=url, headers={"X-A": "1\x00"})
        self.assertNul(s0.Client, base_url=url, headers=["X-A: 1\x00"])
        self.assertNul(s0.LocalBackend, "/tmp/s0py-nul\x00x")
        s0.Client(token="s0_abc", base_url=url).close()

    def test_non_str_still_type_error(self) -> None:
        with self.assertRaises(TypeError):
            capi.status_from_name(b"running")  # type: ignore[arg-type]
        with self.assertRaises(ValueError):
            capi.status_from_name("running\x00")


if __name__ == "__main__":
    unittest.main()
