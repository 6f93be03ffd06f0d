"""The rest of the client surface: claim options, update, refresh,
snapshots, restore, fork, files, list iteration, client options."""
from __future__ import annotations

import os
import unittest
from datetime import datetime, timedelta, timezone

import libsandbox0 as s0
from libsandbox0 import errors

from _support import BackendCase, ScriptedServer, ok, SANDBOX_JSON


class Lifecycle(BackendCase):
    def test_claim_options_and_get(self) -> None:
        t0 = self.backend.now()
        sb = self.client.sandboxes.claim("default", ttl=120, hard_ttl=600, auto_resume=False,
                                         env_vars={"A": "1"}, memory="512Mi")
        self.assertEqual(sb.template_id, "default")
        g = self.client.get_sandbox(sb.id)
        self.assertEqual(g.sandbox_id, g.id)
        self.assertFalse(g.auto_resume)
        self.assertEqual(g.expires_at, t0 + timedelta(seconds=120))
        self.assertEqual(g.hard_expires_at, t0 + timedelta(seconds=600))
        self.assertEqual(g.raw["id"], sb.id)
        st = self.client.sandboxes.status(sb.id)
        self.assertEqual((st.id, st.status), (sb.id, "running"))
        self.assertEqual(str(st.status), "running")
        self.client.sandboxes.delete(sb.id)
        with self.assertRaises(errors.NotFoundError):
            self.client.sandboxes.delete(sb.id)

    def test_update_and_refresh(self) -> None:
        sb = self.claim(ttl=60)
        self.backend.advance_clock(10)
        u = self.client.sandboxes.update(sb.id, ttl=300, auto_resume=False)
        self.assertEqual(u.expires_at, self.backend.now() + timedelta(seconds=300))
        self.assertFalse(u.auto_resume)
        r = self.client.sandboxes.refresh(sb.id, 45)
        self.assertEqual(r.sandbox_id, sb.id)
        self.assertEqual(r.expires_at, self.backend.now() + timedelta(seconds=45))
        r = self.client.refresh_sandbox(sb.id)  # {} -> now + ttl
        self.assertEqual(r.expires_at, self.backend.now() + timedelta(seconds=300))
        with self.assertRaises(errors.InvalidArgumentError):
            self.client.sandboxes.update(sb.id, ttl=100, hard_ttl=10)
        with self.assertRaises(errors.InvalidArgumentError):
            self.client.sandboxes.refresh(sb.id, -1)
        self.client.sandboxes.pause_and_wait(sb.id)
        with self.assertRaises(errors.ConflictError):
            self.client.sandboxes.refresh(sb.id, 10)
        self.client.sandboxes.delete(sb.id)

    def test_pause_resume_results(self) -> None:
        sb = self.claim()
        p = self.client.sandboxes.pause(sb.id)
        self.assertEqual((p.sandbox_id, p.http_status), (sb.id, 200))
        self.settle()
        p2 = self.client.pause_sandbox(sb.id)  # already paused: idempotent
        self.assertTrue(p2.paused)
        r = self.client.resume_sandbox(sb.id, memory=False)
        self.assertTrue(r.resumed)
        self.assertEqual(self.client.get_sandbox(sb.id).status, "running")
        self.client.delete_sandbox(sb.id)

    def test_snapshots_restore_fork(self) -> None:
        sb = self.claim()
        f = self.client.files
        f.write(sb.id, "/workspace/v", "one")
        exp = self.backend.now() + timedelta(days=1)
        snap = self.client.snapshots.create(sb.id, "milestone", "first", expires_at=exp)
        self.assertEqual((snap.sandbox_id, snap.name, snap.description), (sb.id, "milestone",
                                                                          "first"))
        self.assertEqual(snap.expires_at, exp.replace(microsecond=exp.microsecond // 1000 * 1000))
        self.assertEqual(self.client.snapshots.get(snap.id).id, snap.id)
        self.assertEqual([x.id for x in self.client.sandboxes.list_snapshots(sb.id)], [snap.id])
        with self.assertRaises(errors.InvalidArgumentError):
            self.client.snapshots.create(sb.id, expires_at=self.backend.now() - timedelta(days=1))
        f.write(sb.id, "/workspace/v", "two")
        child = self.client.sandboxes.fork(sb.id, ttl=0)
        self.assertNotEqual(child.id, sb.id)
        self.assertEqual((child.status, child.paused), ("paused", True))
        with self.assertRaises(errors.ConflictError):
            self.client.sandboxes.restore(sb.id, snap.id)  # running
        self.client.sandboxes.pause_and_wait(sb.id)
        rr = self.client.sandboxes.restore(sb.id, snap.id)
        self.assertEqual((rr.snapshot_id, rr.status), (snap.id, "paused"))
        self.client.sandboxes.resume_and_wait(sb.id)
        self.assertEqual(f.read_text(sb.id, "/workspace/v"), "one")
        self.client.sandboxes.resume_and_wait(child.id)
        self.assertEqual(f.read_text(child.id, "/workspace/v"), "two")
        with self.assertRaises(errors.InvalidArgumentError):
            self.client.sandboxes.fork(sb.id, memory=True)  # no idempotency key
        self.client.snapshots.delete(snap.id)
        with self.assertRaises(errors.NotFoundError):
            self.client.snapshots.get(snap.id)
        for x in (sb.id, child.id):
            self.client.sandboxes.delete(x)

    def test_wait_not_found_ok(self) -> None:
        sb = self.claim()
        self.client.sandboxes.delete(sb.id)
        self.assertIsNone(self.client.sandboxes.wait(sb.id, until="running", not_found_ok=True))
        with self.assertRaises(errors.NotFoundError):
            self.client.sandboxes.wait(sb.id, until="running")
        with self.assertRaises(errors.InvalidArgumentError):
            self.client.sandboxes.wait("x", until="sleeping")

    def test_list_iter_and_filters(self) -> None:
        ids = [self.claim().id for _ in range(7)]
        self.client.sandboxes.pause_and_wait(ids[0])
        got = [x.id for x in self.client.sandboxes.iter(page_size=3)]
        self.assertTrue(set(ids) <= set(got))
        self.assertIn(ids[0], [x.id for x in self.client.sandboxes.iter(paused=True)])
        running = self.client.sandboxes.list(status="running", limit=200)
        self.assertNotIn(ids[0], [x.id for x in running])
        self.assertEqual(self.client.sandboxes.list(template_id="nope").count, 0)
        pages = list(self.client.sandboxes.pages(page_size=3))
        self.assertEqual([len(p) for p in pages][:2], [3, 3])
        self.assertFalse(pages[-1].has_more)
        self.assertTrue(set(ids) <= {x.id for p in pages for x in p})
        page = self.client.sandboxes.list(limit=3)
        self.assertEqual(page.next_offset, 3)
        self.assertEqual(len(list(page)), 3)
        self.assertEqual(len(self.client.list_sandboxes(limit=2)), 2)
        for x in ids:
            self.client.sandboxes.delete(x)


class Files(BackendCase):
    def test_files_api(self) -> None:
        sb = self.claim()
        f = self.client.files
        f.mkdir(sb.id, "/workspace/a/b", recursive=True)
        f.write(sb.id, "/workspace/a/b/one.bin", bytearray(b"\x00\x01\x02"))
        f.write(sb.id, "rel.txt", memoryview(b"relative"))
        f.write(sb.id, "/workspace/uni.txt", "héllo")
        self.assertEqual(f.read(sb.id, "/workspace/rel.txt"), b"relative")
        self.assertEqual(f.read_text(sb.id, "/workspace/uni.txt"), "héllo")
        st = f.stat(sb.id, "/workspace/a/b/one.bin")
        self.assertEqual((st.name, st.type, st.size, st.mode, st.is_link),
                         ("one.bin", s0.FileType.FILE, 3, 0o644, False))
        self.assertTrue(f.stat(sb.id, "/workspace/a").is_dir)
        names = sorted(x.name for x in f.list(sb.id, "/workspace/a/b"))
        self.assertEqual(names, ["one.bin"])
        f.move(sb.id, "/workspace/a/b/one.bin", "/workspace/c/d/two.bin")
        self.assertFalse(f.exists(sb.id, "/workspace/a/b/one.bin"))
        self.assertTrue(f.exists(sb.id, "/workspace/c/d/two.bin"))
        f.delete(sb.id, "/workspace/c")
        f.delete(sb.id, "/workspace/c")  # missing path succeeds
        with self.assertRaises(errors.NotFoundError) as cm:
            f.list(sb.id, "/workspace/c")
        self.assertEqual(cm.exception.code, "directory_not_found")
        with self.assertRaises(errors.ConflictError):
            f.read(sb.id, "/workspace/a")
        with self.assertRaises(TypeError):
            f.write(sb.id, "/workspace/x", 12)  # type: ignore[arg-type]
        big = os.urandom(3 << 20)
        f.write(sb.id, "/workspace/big", big)
        self.assertEqual(f.read(sb.id, "/workspace/big"), big)
        self.assertEqual(f.read(sb.id, "/workspace/empty") if f.write(sb.id, "/workspace/empty",
                                                                     b"") is None else None, b"")
        self.client.sandboxes.delete(sb.id)


class ClientOptions(unittest.TestCase):
    def test_http_client_options_and_env(self) -> None:
        with ScriptedServer([(200, {}, ok(SANDBOX_JSON))]) as srv:
            with s0.Client(token="  s0_abc  ", base_url=srv.base_url + "/prefix/",
                           headers={"X-Extra": "1"}, user_agent="ua/1", team_id="team9",
                           timeout=5) as c:
                self.assertEqual(c.base_url, srv.base_url + "/prefix")
                sb = c.get_sandbox("sb_fake")
                self.assertEqual((sb.id, sb.runtime_generation), ("sb_fake", 1))
                self.assertEqual(sb.created_at, datetime(2026, 1, 1, tzinfo=timezone.utc))
            m, path, h, _ = srv.requests[-1]
            self.assertEqual(path, "/prefix/api/v1/sandboxes/sb_fake")
            self.assertEqual((h["Authorization"], h["X-Extra"], h["User-Agent"], h["X-Team-ID"]),
                             ("Bearer s0_abc", "1", "ua/1", "team9"))
            old = {k: os.environ.get(k) for k in ("SANDBOX0_BASE_URL", "SANDBOX0_TOKEN")}
            os.environ["SANDBOX0_BASE_URL"] = srv.base_url
            os.environ["SANDBOX0_TOKEN"] = "s0_fromenv"
            try:
                with s0.Client.from_env() as c:
                    c.sandboxes.get("sb_fake")
                    self.assertEqual(c.base_url, srv.base_url)
            finally:
                for k, v in old.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            self.assertEqual(srv.requests[-1][2]["Authorization"], "Bearer s0_fromenv")

    def test_bad_options(self) -> None:
        with self.assertRaises(errors.InvalidArgumentError):
            s0.Client(base_url="http://x", headers=["Bad\nHeader: 1"])
        with self.assertRaises(errors.InvalidArgumentError):
            s0.Client(timeout=-3)
        with self.assertRaises(TypeError):
            s0.Client(headers="X: 1")  # a single string is not a list of headers
        c = s0.Client()
        self.assertEqual(c.base_url, s0.DEFAULT_BASE_URL)
        self.assertIn("api.sandbox0.ai", repr(c))
        c.close()
        self.assertIn("closed", repr(c))


if __name__ == "__main__":
    unittest.main()
