"""The UCloud-style facade (UC-01..UC-16), one test per
UC- row of docs/behaviours.md (or an explicit skip naming what is missing)."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
import unittest
from datetime import timedelta

import libsandbox0 as s0
from libsandbox0 import Sandbox, SandboxQuery, SandboxState, errors
from libsandbox0.facade import claim_config, state_of

from _support import BackendCase

DAY = 86400


class FacadeCase(BackendCase):
    """A backend on a manual clock made the facade's default client."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls._prev = s0.set_default_client(cls.client)

    @classmethod
    def tearDownClass(cls) -> None:
        s0.set_default_client(cls._prev)
        super().tearDownClass()

    def stored_config(self, sandbox_id: str) -> dict:
        """The durable config the backend recorded from the claim body (the
        local stand-in for the request log)."""
        return json.loads(self.backend.inspect(sandbox_id)["sandbox"]["config"])

    def now(self):
        return self.backend.now()

    def assertAbout(self, when, expected, slack_ms: int = 5) -> None:
        self.assertIsNotNone(when)
        self.assertLessEqual(abs((when - expected) / timedelta(milliseconds=1)), slack_ms,
                             f"{when} != {expected}")

    def fs_pause(self, sandbox_id: str) -> None:
        """A filesystem-only pause through the client (the facade's pause is
        always a memory pause); commits the RootFS head."""
        self.client.sandboxes.pause_and_wait(sandbox_id)


class UCloudFacade(FacadeCase):
    def test_UC01_create_running_with_claim_mapping(self) -> None:
        t0 = self.now()
        sandbox = Sandbox.create()  # seed: "Enter the running state after creation"
        sandbox_id = sandbox.sandbox_id
        self.assertTrue(sandbox_id)
        info = self.client.get_sandbox(sandbox_id)
        self.assertEqual((info.status, info.paused, info.template_id),
                         ("running", False, "default"))
        self.assertEqual(sandbox.get_info().state, SandboxState.RUNNING)
        # default lifecycle on_timeout "kill": ttl 0, hard_ttl = timeout (300 s)
        self.assertEqual(claim_config(), {"ttl": 0, "hard_ttl": 300, "auto_resume": False})
        self.assertEqual(self.stored_config(sandbox_id),
                         {"ttl": 0, "hard_ttl": 300, "auto_resume": False})
        self.assertIsNone(info.expires_at)
        self.assertAbout(info.hard_expires_at, t0 + timedelta(seconds=300))
        # on_timeout "pause": config.ttl = timeout
        sbx = Sandbox.create(timeout=10 * 60, lifecycle={"on_timeout": "pause",
                                                          "auto_resume": False})
        self.assertEqual(self.stored_config(sbx.sandbox_id),
                         {"ttl": 600, "hard_ttl": 0, "auto_resume": False})
        got = self.client.get_sandbox(sbx.sandbox_id)
        self.assertAbout(got.expires_at, t0 + timedelta(seconds=600))
        self.assertIsNone(got.hard_expires_at)
        sandbox.kill()
        sbx.kill()

    def test_UC02_pause_is_a_memory_pause_and_never_falls_back(self) -> None:
        """pause() posts {"memory": true} and waits: the sandbox is Paused
        with its compute released (instance and class forms). A capture
        failing after authorisation raises SandboxLifecycleFailedError and
        the sandbox shows `failed` (paused true), never a silent filesystem
        pause; connect() then recovers it from the committed RootFS."""
        sbx = Sandbox.create()
        sid = sbx.sandbox_id
        g = self.client.get_sandbox(sid).runtime_generation
        self.assertEqual(sbx.pause(), sid)
        info = self.client.get_sandbox(sid)
        self.assertEqual((info.status, info.paused, info.runtime_id, info.runtime_generation),
                         ("paused", True, "", g))
        self.assertEqual(sbx.state, SandboxState.PAUSED)
        Sandbox.connect(sid)
        self.assertEqual(self.client.get_sandbox(sid).runtime_generation, g + 1)
        self.assertEqual(Sandbox.pause(sid), sid)  # class form too
        self.assertEqual(sbx.state, SandboxState.PAUSED)
        sbx.kill()

        sbx = Sandbox.create()
        sbx.files.write("/workspace/kept", "committed")
        self.fs_pause(sbx.sandbox_id)  # commits kept
        Sandbox.connect(sbx.sandbox_id)
        self.backend.arm_fault("capture@after-authorize", count=1)
        try:
            with self.assertRaises(errors.SandboxLifecycleFailedError) as cm:
                sbx.pause()
        finally:
            self.backend.release_fault("capture@after-authorize")
        self.assertEqual(cm.exception.sandbox_id, sbx.sandbox_id)
        self.settle()
        after = self.client.get_sandbox(sbx.sandbox_id)
        self.assertEqual((after.status, after.paused), ("failed", True))
        same = Sandbox.connect(sbx.sandbox_id)
        self.assertEqual(same.state, SandboxState.RUNNING)
        self.assertEqual(same.files.read("/workspace/kept"), "committed")
        sbx.kill()

    def test_UC02_UC03_memory_state_survives(self) -> None:
        """UC-02 and UC-03: pause() keeps processes, variables and memory
        data; connect() from a new client holding only the id restores
        them (same PID, new runtime, generation + 1)."""
        sbx = Sandbox.create(lifecycle={"on_timeout": "pause"})
        sid = sbx.sandbox_id
        ctxs = self.client.contexts
        ctx = ctxs.create(sid)["id"]
        ctxs.exec(sid, ctx, "GREETING=hello")
        ctxs.exec(sid, ctx, "sleep 100000 &")
        pid = ctxs.exec(sid, ctx, "echo $!")["stdout"].strip()
        sbx.files.write("/tmp/cache", "in memory")
        before = self.client.get_sandbox(sid)
        sbx.pause()
        with self.backend.client() as other:
            same = Sandbox.connect(sid, client=other)
            info = other.get_sandbox(sid)
            self.assertEqual((info.status, info.runtime_generation),
                             ("running", before.runtime_generation + 1))
            self.assertNotEqual(info.runtime_id, before.runtime_id)
            self.assertEqual(other.contexts.exec(sid, ctx, "echo $GREETING")["stdout"],
                             "hello\n")
            ps = other.contexts.exec(sid, ctx, "ps")["stdout"]
            self.assertTrue(any(line.split()[:1] == [pid] and "sleep 100000" in line
                                for line in ps.splitlines()), ps)
            self.assertEqual(same.files.read("/tmp/cache"), "in memory")
        sbx.kill()

    def test_UC03_connect_resumes_same_id_from_a_new_client(self) -> None:
        sbx = Sandbox.create(lifecycle={"on_timeout": "pause"})
        sid = sbx.sandbox_id
        sbx.files.write("/workspace/state.txt", "loaded")
        g = self.client.get_sandbox(sid).runtime_generation
        self.fs_pause(sid)
        with self.backend.client() as other:  # a new client holding only the id
            same = Sandbox.connect(sid, client=other)
            self.assertEqual(same.sandbox_id, sid)
            self.assertEqual(same.files.read("/workspace/state.txt"), "loaded")
            info = other.get_sandbox(sid)
            self.assertEqual((info.status, info.paused, info.runtime_generation),
                             ("running", False, g + 1))
        sbx.kill()

    def test_UC03_connect_after_backend_restart(self) -> None:
        d = tempfile.mkdtemp(prefix="s0py-uc03-")
        try:
            with s0.LocalBackend(d, manual_clock=True) as b:
                c = b.client()
                sbx = Sandbox.create(client=c, lifecycle={"on_timeout": "pause"})
                sid = sbx.sandbox_id
                sbx.files.write("/workspace/kept", b"1")
                c.sandboxes.pause_and_wait(sid)
            with s0.LocalBackend(d, manual_clock=True) as b:  # reopened: a new process's view
                same = Sandbox.connect(sid, client=b.client())
                self.assertEqual(same.sandbox_id, sid)
                self.assertEqual(same.files.read("/workspace/kept", format="bytes"), b"1")
                self.assertEqual(same.state, SandboxState.RUNNING)
                same.kill()
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_UC04_connect_resets_the_timeout(self) -> None:
        sbx = Sandbox.create(timeout=600, lifecycle={"on_timeout": "pause"})
        sid = sbx.sandbox_id
        g = self.client.get_sandbox(sid).runtime_generation
        self.backend.advance_clock(100)
        Sandbox.connect(sid, timeout=60)  # seed: connect("your-sandbox-id", timeout=60)
        info = self.client.get_sandbox(sid)
        self.assertAbout(info.expires_at, self.now() + timedelta(seconds=60))
        self.assertEqual(info.runtime_generation, g)  # running: no new generation
        self.backend.advance_clock(10)
        Sandbox.connect(sid)  # default 300 s
        self.assertAbout(self.client.get_sandbox(sid).expires_at,
                         self.now() + timedelta(seconds=300))
        self.assertEqual(self.client.get_sandbox(sid).runtime_generation, g)
        sbx.kill()

    def test_UC05_kill_running_and_paused_both_forms(self) -> None:
        for form in ("instance", "class"):
            for paused in (False, True):
                with self.subTest(form=form, paused=paused):
                    sbx = Sandbox.create()
                    sid = sbx.sandbox_id
                    if paused:
                        self.fs_pause(sid)
                    if form == "instance":
                        sbx.kill()
                    else:
                        Sandbox.kill(sid)
                    self.settle()
                    with self.assertRaises(errors.NotFoundError):
                        self.client.get_sandbox(sid)
                    with self.assertRaises(errors.NotFoundError):
                        Sandbox.connect(sid)
                    with self.assertRaises(errors.NotFoundError):
                        Sandbox.kill(sid)
                    self.assertEqual(sbx.state, SandboxState.KILLED)
                    facts = self.backend.inspect(sid)
                    self.assertEqual([r for r in facts["node"]["runtimes"]
                                      if r["sandbox_id"] == sid], [])
                    self.assertNotIn("sandbox", facts)  # identity and storage gone

    def test_UC06_snapshot_is_an_invisible_barrier(self) -> None:
        sbx = Sandbox.create()
        sid = sbx.sandbox_id
        before = self.client.get_sandbox(sid)
        seen = []
        stop = threading.Event()

        def poll() -> None:
            with self.backend.client() as c:
                while not stop.is_set():
                    seen.append(c.get_sandbox(sid))

        th = threading.Thread(target=poll)
        th.start()
        try:
            for i in range(5):
                sbx.create_snapshot(f"s{i}")
        finally:
            stop.set()
            th.join()
        self.assertTrue(seen)
        self.assertEqual({(x.status, x.paused) for x in seen}, {("running", False)})
        after = self.client.get_sandbox(sid)
        self.assertEqual((after.runtime_id, after.runtime_generation),
                         (before.runtime_id, before.runtime_generation))
        self.assertEqual(sbx.state, SandboxState.RUNNING)
        for snap in self.client.snapshots.list(sid):
            self.client.snapshots.delete(snap.id)
        sbx.kill()

    def test_UC06_state_mapping(self) -> None:
        base = self.client.sandboxes.claim()
        S = s0.SandboxStatus
        from dataclasses import replace
        self.assertEqual(state_of(replace(base, status=S.RUNNING, paused=False)),
                         SandboxState.RUNNING)
        self.assertEqual(state_of(replace(base, status=S.STARTING, paused=False)),
                         SandboxState.RUNNING)
        self.assertEqual(state_of(replace(base, status=S.PAUSED, paused=True)),
                         SandboxState.PAUSED)
        self.assertEqual(state_of(replace(base, status=S.FAILED, paused=True)),
                         SandboxState.PAUSED)
        self.assertEqual(state_of(replace(base, status=S.TERMINATING, paused=False)),
                         SandboxState.KILLED)
        self.assertEqual(state_of(None), SandboxState.KILLED)
        self.assertNotIn("snapshotting", [s.value for s in S])  # never on the wire
        self.client.sandboxes.delete(base.id)


class FacadeList(FacadeCase):
    """List rows on their own backend, so counts are exact."""

    def test_UC07_state_filter(self) -> None:
        running = [Sandbox.create() for _ in range(3)]
        paused = [Sandbox.create() for _ in range(2)]
        for p in paused:
            self.fs_pause(p.sandbox_id)

        def drain(states):
            pg = Sandbox.list(query=SandboxQuery(state=states))
            out = pg.next_items()
            while pg.has_next:
                out.extend(pg.next_items())
            return out

        got = drain([SandboxState.PAUSED])
        self.assertEqual({x.sandbox_id for x in got}, {p.sandbox_id for p in paused})
        self.assertTrue(all(x.state == SandboxState.PAUSED for x in got))
        got = drain([SandboxState.RUNNING])
        self.assertEqual({x.sandbox_id for x in got}, {r.sandbox_id for r in running})
        both = drain([SandboxState.PAUSED, SandboxState.RUNNING, SandboxState.PAUSED])
        self.assertEqual(len(both), 5)
        self.assertEqual(len({x.sandbox_id for x in both}), 5)
        self.assertEqual(drain([SandboxState.SNAPSHOTTING, SandboxState.KILLED]), [])
        for x in running + paused:
            x.kill()

    def test_UC09_list_contract_beneath_the_paginator(self) -> None:
        """Newest first, [] past the end, count before paging, has_more,
        limit range. (The server's own 400 for limit 0/201 and the boolean
        spellings of `paused` are unreachable through the C client, which
        validates first and sends true/false; the server issue tests them.)"""
        made = []
        for _ in range(5):
            made.append(self.client.sandboxes.claim().id)
            self.backend.advance_clock(1)
        page = self.client.sandboxes.list(limit=2)
        self.assertEqual(page.count, 5)
        self.assertTrue(page.has_more)
        self.assertEqual([x.id for x in page.sandboxes], made[::-1][:2])
        created = [x.created_at for x in self.client.sandboxes.list(limit=200).sandboxes]
        self.assertEqual(created, sorted(created, reverse=True))
        last = self.client.sandboxes.list(limit=2, offset=4)
        self.assertEqual((len(last), last.has_more, last.count), (1, False, 5))
        past = self.client.sandboxes.list(limit=2, offset=50)
        self.assertEqual((past.sandboxes, past.has_more, past.count), ([], False, 5))
        for bad in (0, 201, -1):
            with self.assertRaises(errors.InvalidArgumentError):
                self.client.sandboxes.list(limit=bad)
        with self.assertRaises(errors.InvalidArgumentError):
            self.client.sandboxes.list(offset=-1)
        self.assertEqual(self.client.sandboxes.list(paused=False).count, 5)
        self.assertEqual(self.client.sandboxes.list(paused=True).count, 0)
        self.assertEqual([x.id for x in self.client.sandboxes.iter(page_size=2)], made[::-1])
        for sid in made:
            self.client.sandboxes.delete(sid)


class FacadePaginator(FacadeCase):
    """250 paused sandboxes on their own backend."""

    def test_UC08_paginator_250_in_pages_of_100(self) -> None:
        def one(_: int) -> str:
            sid = self.client.sandboxes.claim().id
            self.client.sandboxes.pause_and_wait(sid)
            return sid

        with ThreadPoolExecutor(4) as ex:  # 4 Python threads share the client
            ids = set(ex.map(one, range(250)))
        self.assertEqual(len(ids), 250)
        paginator = Sandbox.list(query=SandboxQuery(state=[SandboxState.PAUSED]))
        sizes = []
        # UC-08's loop, verbatim
        sandboxes = paginator.next_items()
        sizes.append(len(sandboxes))
        while paginator.has_next:
            items = paginator.next_items()
            sizes.append(len(items))
            sandboxes.extend(items)
        self.assertEqual(sizes, [100, 100, 50])
        self.assertFalse(paginator.has_next)
        self.assertIsNone(paginator.next_token)
        self.assertEqual(paginator.next_items(), [])
        got = [x.sandbox_id for x in sandboxes]
        self.assertEqual(len(got), len(set(got)))
        self.assertEqual(set(got), ids)


class FacadeTimeouts(FacadeCase):
    def test_UC10_on_timeout_pause_persists(self) -> None:
        sandbox = Sandbox.create(
            timeout=10 * 60,  # Optional: set the timeout to 10 minutes
            lifecycle={
                "on_timeout": "pause",  # Automatically pause after timeout
                "auto_resume": False,  # Optional, default value is False
            },
        )
        sid = sandbox.sandbox_id
        gens = []
        for _ in range(3):
            self.backend.advance_clock(600 + 1)
            self.settle()
            info = self.client.get_sandbox(sid)
            self.assertEqual((info.status, info.paused), ("paused", True))
            self.assertEqual(sandbox.state, SandboxState.PAUSED)
            Sandbox.connect(sid, timeout=600)
            info = self.client.get_sandbox(sid)
            self.assertEqual(info.status, "running")
            gens.append(info.runtime_generation)
        self.assertEqual(gens, [gens[0], gens[0] + 1, gens[0] + 2])
        self.backend.advance_clock(600 + 1)
        self.settle()
        self.backend.advance_clock(365 * DAY)  # kept until killed
        self.settle()
        self.assertEqual(self.client.get_sandbox(sid).paused, True)
        Sandbox.connect(sid)
        self.assertEqual(self.client.get_sandbox(sid).status, "running")
        sandbox.kill()

    def test_UC11_on_timeout_kill_deletes_and_connect_rearms(self) -> None:
        sbx = Sandbox.create(timeout=60)  # default on_timeout: kill
        self.backend.advance_clock(61)
        self.settle()
        with self.assertRaises(errors.NotFoundError):
            self.client.get_sandbox(sbx.sandbox_id)
        self.assertEqual(sbx.state, SandboxState.KILLED)

        sbx = Sandbox.create(timeout=60, lifecycle={"on_timeout": "kill"})
        sid = sbx.sandbox_id
        self.backend.advance_clock(30)
        Sandbox.connect(sid, timeout=60)  # hard deadline now + 60 (update, not refresh)
        info = self.client.get_sandbox(sid)
        self.assertIsNone(info.expires_at)  # no soft pause was armed
        self.assertAbout(info.hard_expires_at, self.now() + timedelta(seconds=60))
        self.backend.advance_clock(31)  # t0 + 61: the original deadline has passed
        self.settle()
        self.assertEqual(self.client.get_sandbox(sid).status, "running")
        self.backend.advance_clock(30)  # t0 + 91
        self.settle()
        with self.assertRaises(errors.NotFoundError):
            self.client.get_sandbox(sid)

    def test_UC11_paused_kill_mode_sandbox_is_kept_until_deleted(self) -> None:
        """UC-10: "Paused sandboxes will remain until you actively delete
        them" — also with the default on_timeout "kill": pause clears the
        hard deadline, connect re-arms it."""
        for form in ("instance", "class"):
            with self.subTest(form=form):
                sbx = Sandbox.create(timeout=60)  # default on_timeout: kill
                sid = sbx.sandbox_id
                if form == "instance":
                    self.assertEqual(sbx.pause(), sid)
                else:
                    self.assertEqual(Sandbox.pause(sid), sid)
                info = self.client.get_sandbox(sid)
                self.assertEqual((info.status, info.paused), ("paused", True))
                self.assertIsNone(info.hard_expires_at)
                self.assertIsNone(info.expires_at)
                self.backend.advance_clock(61)  # past the timeout
                self.settle()
                self.backend.advance_clock(365 * DAY)  # and a year
                self.settle()
                info = self.client.get_sandbox(sid)
                self.assertEqual((info.status, info.paused), ("paused", True))
                self.assertEqual(sbx.state, SandboxState.PAUSED)
                same = Sandbox.connect(sid, timeout=60)
                info = self.client.get_sandbox(sid)
                self.assertEqual(info.status, "running")
                self.assertIsNone(info.expires_at)  # still kill-mode, not pause-mode
                self.assertAbout(info.hard_expires_at, self.now() + timedelta(seconds=60))
                self.backend.advance_clock(30)
                self.settle()
                self.assertEqual(self.client.get_sandbox(sid).status, "running")
                self.backend.advance_clock(31)  # the re-armed deadline passes: deleted
                self.settle()
                with self.assertRaises(errors.NotFoundError):
                    self.client.get_sandbox(sid)
                self.assertEqual(same.state, SandboxState.KILLED)

    def test_UC12_auto_resume_defaults_to_false(self) -> None:
        sbx = Sandbox.create(lifecycle={"on_timeout": "pause"})
        sid = sbx.sandbox_id
        self.assertIs(self.stored_config(sid)["auto_resume"], False)
        self.assertFalse(self.client.get_sandbox(sid).auto_resume)
        self.fs_pause(sid)
        with self.assertRaises(errors.UnavailableError) as cm:
            sbx.files.read("/workspace")  # a paused sandbox cannot serve runtime requests
        self.assertEqual((cm.exception.status_code, cm.exception.reason),
                         (503, "auto_resume_disabled"))
        self.assertEqual(self.client.get_sandbox(sid).paused, True)  # not woken
        Sandbox.connect(sid)
        sbx.files.write("/workspace/after", "ok")
        self.assertEqual(sbx.files.read("/workspace/after"), "ok")
        sbx.kill()
        # auto_resume True is sent explicitly too
        on = Sandbox.create(lifecycle={"auto_resume": True})
        self.assertIs(self.stored_config(on.sandbox_id)["auto_resume"], True)
        on.kill()

    def test_UC12_server_translates_config_lifecycle(self) -> None:
        t0 = self.now()
        sb = self.client.sandboxes.claim(
            config={"ttl": 120, "lifecycle": {"on_timeout": "kill", "auto_resume": False}})
        info = self.client.get_sandbox(sb.id)
        self.assertFalse(info.auto_resume)
        self.assertIsNone(info.expires_at)
        self.assertAbout(info.hard_expires_at, t0 + timedelta(seconds=120))
        self.client.sandboxes.delete(sb.id)

    @unittest.skip("UC-13: public service routes are deferred (docs/decisions.md 'Deferred')")
    def test_UC13_network_services_across_pause(self) -> None:
        pass

    @unittest.skip("UC-15: n/a-local — UCloud's pause/restore timings; the facade uses a "
                   "360 s memory budget (facade.MEMORY_WAIT_SEC)")
    def test_UC15_pause_and_restore_timings(self) -> None:
        pass

    def test_UC16_storage_stand_in(self) -> None:
        """n/a-local for the billing; stand-in: a paused sandbox's writes are
        retained in the object store (the inspection's retained_bytes) and
        kill + GC releases them."""
        sbx = Sandbox.create()
        sid = sbx.sandbox_id
        sbx.files.write("/workspace/blob", os.urandom(2 << 20))
        stored0 = self.backend.inspect()["storage"]["stored_bytes"]
        self.fs_pause(sid)
        stored1 = self.backend.inspect()["storage"]["stored_bytes"]
        self.assertGreater(stored1, stored0 + (1 << 20))
        self.assertGreater(self.backend.inspect(sid)["sandbox"]["retained_bytes"], 2 << 20)
        sbx.kill()
        self.settle()
        self.backend.gc()
        st = self.backend.inspect()["storage"]
        self.assertLess(st["stored_bytes"], stored1 - (1 << 20))
        self.assertGreater(st["gc_objects_deleted"], 0)


class FacadeRunLimit(FacadeCase):
    """UC-14 on a backend with the UCloud document's 24 h continuous-run
    limit (LocalBackend(continuous_run_limit_sec=86400))."""

    backend_kwargs = {"continuous_run_limit_sec": DAY}

    def test_UC14_continuous_run_limit(self) -> None:
        # on_timeout "pause" with a timeout past 24 h: paused at 24 h, not before
        sbx = Sandbox.create(timeout=2 * DAY, lifecycle={"on_timeout": "pause"})
        sid = sbx.sandbox_id
        sbx.files.write("/workspace/kept", "data")
        self.backend.advance_clock(DAY - 1)
        self.settle()
        self.assertTrue(sbx.is_running())
        self.backend.advance_clock(1)
        self.settle()
        self.assertEqual(sbx.state, SandboxState.PAUSED)
        self.assertEqual(self.backend.inspect(sid)["sandbox"]["operation_counts"]["ttl_pause"], 1)
        # connect resumes: a new runtime generation, and the count starts again
        Sandbox.connect(sid, timeout=2 * DAY)
        self.backend.advance_clock(23 * 3600)
        self.settle()
        self.assertTrue(sbx.is_running())
        self.assertEqual(sbx.files.read("/workspace/kept"), "data")
        self.backend.advance_clock(3600)
        self.settle()
        self.assertEqual(sbx.state, SandboxState.PAUSED)
        sbx.kill()
        # on_timeout "kill" (the default) with a timeout past 24 h: killed at 24 h
        k = Sandbox.create(timeout=2 * DAY)
        self.backend.advance_clock(DAY)
        self.settle()
        self.assertEqual(k.state, SandboxState.KILLED)


class FacadeValidation(unittest.TestCase):
    def test_claim_config_validation(self) -> None:
        self.assertEqual(claim_config(60, {"on_timeout": "pause", "auto_resume": True}),
                         {"ttl": 60, "hard_ttl": 0, "auto_resume": True})
        for bad in ({"on_timeout": "sleep"}, {"auto_resume": "yes"}, {"nope": 1}):
            with self.assertRaises(errors.InvalidArgumentError):
                claim_config(60, bad)
        for t in (0, -5, float("nan"), float("inf"), True):
            with self.assertRaises(errors.InvalidArgumentError):
                claim_config(t)


if __name__ == "__main__":
    unittest.main()
