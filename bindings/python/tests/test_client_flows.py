"""The product document's flows end to end on the embedded backend (CL-14),
through the Python client."""
from __future__ import annotations

import math
import unittest

import libsandbox0 as s0
from libsandbox0 import errors

from _support import BackendCase


class SeedFlows(BackendCase):
    def _workspace(self, sid: str) -> None:
        f = self.client.files
        f.write(sid, "/workspace/notes.md", "# kept\n")
        f.write(sid, "/var/tmp/cache", b"cache")
        f.write(sid, "/tmp/scratch", b"scratch")

    def _check_survivors(self, sid: str) -> None:
        f = self.client.files
        self.assertEqual(f.read(sid, "/workspace/notes.md"), b"# kept\n")
        self.assertEqual(f.read(sid, "/var/tmp/cache"), b"cache")
        with self.assertRaises(errors.NotFoundError) as cm:
            f.stat(sid, "/tmp/scratch")
        self.assertEqual(cm.exception.code, "file_not_found")

    def test_CL14_seed_python_calls(self) -> None:
        """CL-14's Python example verbatim (memory=True, timeout_sec=360):
        the memory pause retains the execution image and the memory resume
        restores it at generation + 1."""
        client = self.client
        sandbox = client.sandboxes.claim("default")
        self._workspace(sandbox.id)
        before = client.get_sandbox(sandbox.id)

        mp = client.sandboxes.pause_and_wait(
            sandbox.id,
            memory=True,
            timeout_sec=360,
        )
        self.assertEqual((mp.status, mp.paused, mp.runtime_id), (s0.SandboxStatus.PAUSED, True, ""))

        paused = client.sandboxes.pause_and_wait(sandbox.id, timeout_sec=360)
        self.assertEqual((paused.status, paused.paused, paused.runtime_id),
                         (s0.SandboxStatus.PAUSED, True, ""))
        resumed = client.sandboxes.resume_and_wait(
            sandbox.id,
            memory=True,
            timeout_sec=360,
        )
        self.assertEqual(resumed.status, "running")
        self.assertFalse(resumed.paused)
        self.assertEqual(resumed.runtime_generation, before.runtime_generation + 1)
        self.assertNotEqual(resumed.runtime_id, before.runtime_id)
        f = client.files  # a memory cycle keeps the runtime tmpfs too (MEM-03)
        self.assertEqual(f.read(sandbox.id, "/workspace/notes.md"), b"# kept\n")
        self.assertEqual(f.read(sandbox.id, "/tmp/scratch"), b"scratch")

        sb = client.get_sandbox(sandbox.id)  # "Inspect State" example
        self.assertEqual(f"{sb.paused} {sb.status} {sb.runtime_generation}",
                         f"False running {before.runtime_generation + 1}")
        self.assertTrue(sb.runtime_id.startswith("rt_"))
        client.sandboxes.delete(sandbox.id)

    def test_filesystem_mode_cycle(self) -> None:
        """Default (filesystem-only) pause/resume: files and identity kept,
        /tmp recreated, runtime_id replaced, generation + 1."""
        sb = self.claim()
        g0 = self.client.get_sandbox(sb.id)
        self._workspace(sb.id)
        p = self.client.sandboxes.pause_and_wait(sb.id)
        self.assertTrue(p.paused and p.status == "paused" and p.runtime_id == "")
        self.assertEqual(p.runtime_generation, g0.runtime_generation)
        r = self.client.sandboxes.resume_and_wait(sb.id)
        self.assertEqual(r.runtime_generation, g0.runtime_generation + 1)
        self.assertEqual(r.id, sb.id)
        self._check_survivors(sb.id)
        # resume of a running sandbox: no new generation
        r2 = self.client.sandboxes.resume_and_wait(sb.id)
        self.assertEqual(r2.runtime_generation, r.runtime_generation)
        self.client.sandboxes.delete(sb.id)

    def _repl_with_job(self, sid: str) -> tuple:
        """A REPL context holding GREETING=hello and a background `sleep`;
        returns (context id, the job's PID)."""
        ctx = self.client.contexts.create(sid)
        self.assertEqual((ctx["type"], ctx["running"]), ("repl", True))
        self.client.contexts.exec(sid, ctx["id"], "GREETING=hello")
        self.client.contexts.exec(sid, ctx["id"], "sleep 100000 &")
        pid = int(self.client.contexts.exec(sid, ctx["id"], "echo $!")["stdout"])
        self.assertGreater(pid, 1)
        return ctx["id"], pid

    def _ps_has(self, sid: str, ctx: str, pid: int) -> bool:
        ps = self.client.contexts.exec(sid, ctx, "ps")["stdout"].splitlines()
        return any(line.split()[:1] == [str(pid)] and "sleep 100000" in line for line in ps)

    def test_contexts_api(self) -> None:
        """client.contexts over s0_context_*: dicts in, dicts out, errors mapped."""
        c = self.client
        sb = self.claim()
        done = c.contexts.create(sb.id, command=["echo", "hi"], wait_until_done=True)
        self.assertEqual((done["type"], done["stdout"], done["exit_code"]), ("cmd", "hi\n", 0))
        repl = c.contexts.create(sb.id, env_vars={"A": "1"}, cwd="/tmp")
        self.assertEqual((repl["type"], repl["cwd"], repl["env_vars"]), ("repl", "/tmp", {"A": "1"}))
        self.assertEqual(c.contexts.exec(sb.id, repl["id"], "echo $A; pwd")["stdout"], "1\n/tmp\n")
        listed = c.contexts.call("GET", sb.id, "/contexts")["contexts"]
        self.assertEqual({x["id"] for x in listed}, {done["id"], repl["id"]})
        c.contexts.delete(sb.id, repl["id"])
        with self.assertRaises(errors.NotFoundError) as cm:
            c.contexts.get(sb.id, repl["id"])
        self.assertEqual(cm.exception.code, "context_not_found")
        with self.assertRaises(errors.InvalidArgumentError):
            c.contexts.create(sb.id, type="nope")
        with self.assertRaises(TypeError):
            c.contexts.create(sb.id, command="ls")
        c.sandboxes.delete(sb.id)

    def test_CL14_memory_roundtrip_keeps_processes(self) -> None:
        """A memory pause retains the REPL's process: after a memory resume
        (new runtime_id, generation + 1) the variable, the background job's
        PID and /tmp are still there. A filesystem-only cycle afterwards
        ends them: the context is gone and /tmp is recreated."""
        c = self.client
        sb = self.claim()
        ctx, pid = self._repl_with_job(sb.id)
        c.files.write(sb.id, "/tmp/scratch", b"scratch")
        before = c.get_sandbox(sb.id)

        p = c.sandboxes.pause_and_wait(sb.id, memory=True, timeout_sec=360)
        self.assertEqual((p.status, p.paused, p.runtime_id), ("paused", True, ""))
        r = c.sandboxes.resume_and_wait(sb.id, memory=True, timeout_sec=360)
        self.assertEqual((r.status, r.paused), ("running", False))
        self.assertEqual(r.runtime_generation, before.runtime_generation + 1)
        self.assertNotEqual(r.runtime_id, before.runtime_id)
        self.assertEqual(c.contexts.get(sb.id, ctx)["running"], True)
        self.assertEqual(c.contexts.exec(sb.id, ctx, "echo $GREETING")["stdout"], "hello\n")
        self.assertTrue(self._ps_has(sb.id, ctx, pid))
        self.assertEqual(c.files.read(sb.id, "/tmp/scratch"), b"scratch")

        c.sandboxes.pause_and_wait(sb.id)  # filesystem-only: processes end
        c.sandboxes.resume_and_wait(sb.id, memory=True)  # no image: a filesystem resume
        with self.assertRaises(errors.NotFoundError) as cm:
            c.contexts.exec(sb.id, ctx, "echo $GREETING")
        self.assertEqual(cm.exception.code, "context_not_found")
        self.assertFalse(c.files.exists(sb.id, "/tmp/scratch"))
        c.sandboxes.delete(sb.id)

    def test_CL14_auto_resume_restores_memory(self) -> None:
        """A context request to a memory-paused sandbox with auto_resume
        wakes it and restores the retained image."""
        c = self.client
        sb = self.claim(auto_resume=True)
        ctx, pid = self._repl_with_job(sb.id)
        c.sandboxes.pause_and_wait(sb.id, memory=True)
        self.assertEqual(c.contexts.exec(sb.id, ctx, "echo $GREETING")["stdout"], "hello\n")
        self.assertTrue(self._ps_has(sb.id, ctx, pid))
        self.assertEqual(c.get_sandbox(sb.id).status, "running")
        c.sandboxes.delete(sb.id)

    def test_CL14_memory_pause_failed_raises_lifecycle_error(self) -> None:
        """A capture failing after authorisation: the memory pause wait raises
        SandboxLifecycleFailedError (status `failed`, paused true, never a
        silent filesystem pause); a memory resume then recovers from the
        committed RootFS with fresh processes."""
        c = self.client
        sb = self.claim()
        ctx, _ = self._repl_with_job(sb.id)
        c.files.write(sb.id, "/workspace/before.txt", "committed")
        c.sandboxes.pause_and_wait(sb.id)  # commits before.txt
        c.sandboxes.resume_and_wait(sb.id)
        self.backend.arm_fault("capture@after-authorize", count=1)
        try:
            with self.assertRaises(errors.SandboxLifecycleFailedError) as cm:
                c.sandboxes.pause_and_wait(sb.id, memory=True, timeout_sec=360)
        finally:
            self.backend.release_fault("capture@after-authorize")
        self.assertEqual(cm.exception.sandbox_id, sb.id)
        self.settle()
        got = c.get_sandbox(sb.id)
        self.assertEqual((got.status, got.paused, got.runtime_id), ("failed", True, ""))
        r = c.sandboxes.resume_and_wait(sb.id, memory=True, timeout_sec=360)
        self.assertEqual(r.status, "running")
        self.assertEqual(c.files.read(sb.id, "/workspace/before.txt"), b"committed")
        with self.assertRaises(errors.NotFoundError):
            c.contexts.get(sb.id, ctx)
        c.sandboxes.delete(sb.id)

    def test_CL14_lifecycle_failed_error_fields(self) -> None:
        """SandboxLifecycleFailedError as the C library raises it for a wait
        that observes a failure status (generic wait with a fail set)."""
        sb = self.claim()
        with self.assertRaises(errors.SandboxLifecycleFailedError) as cm:
            self.client.sandboxes.wait(sb.id, until="paused", fail=["running"])
        e = cm.exception
        self.assertEqual(e.sandbox_id, sb.id)
        self.assertIsNotNone(e.last_sandbox)
        self.assertEqual(e.last_sandbox.id, sb.id)
        self.assertEqual(e.last_sandbox.status, "running")
        self.assertEqual(e.kind, "lifecycle_failed")
        self.assertIsNone(e.status_code)
        self.client.sandboxes.delete(sb.id)

    def test_CL14_wait_timeout_error(self) -> None:
        """Pause accepted with 202 while the node channel is down; the wait
        times out with SandboxWaitTimeoutError (a TimeoutError) carrying the
        last observed sandbox; the pause completes after the fault clears."""
        sb = self.claim()
        self.backend.arm_fault("node_channel", count=0)
        try:
            res = self.client.sandboxes.pause(sb.id)
            self.assertEqual(res.http_status, 202)
            self.assertTrue(res.accepted)
            self.assertFalse(res.paused)
            with self.assertRaises(errors.SandboxWaitTimeoutError) as cm:
                self.client.sandboxes.pause_and_wait(sb.id, timeout_sec=5)
            e = cm.exception
            self.assertIsInstance(e, TimeoutError)
            self.assertEqual((e.reason, e.code, e.sandbox_id), ("wait_deadline", "timeout", sb.id))
            self.assertEqual(e.timeout_sec, 5.0)
            self.assertIsNotNone(e.last_sandbox)
            self.assertFalse(e.last_sandbox.paused)
        finally:
            self.backend.release_fault("node_channel")
        self.settle()
        done = self.client.sandboxes.pause_and_wait(sb.id, timeout_sec=math.inf)
        self.assertTrue(done.paused)
        self.client.sandboxes.delete(sb.id)

    def test_CL14_api_error_fields(self) -> None:
        with self.assertRaises(errors.NotFoundError) as cm:
            self.client.get_sandbox("sb_does_not_exist")
        e = cm.exception
        self.assertIsInstance(e, errors.APIError)
        self.assertEqual((e.status_code, e.code, e.reason), (404, "not_found", "not_found"))
        self.assertTrue(e.message)
        self.assertTrue(e.request_id)
        self.assertIsNone(e.retry_after)
        self.assertIsNone(e.retry_after_ms)
        self.assertFalse(e.retryable)
        self.assertIn("status=404", str(e))
        self.assertTrue(str(e).startswith("NotFoundError("))
        self.assertIn(b"not_found", e.body or b"")

    def test_progress_callback(self) -> None:
        sb = self.claim()
        seen = []
        out = self.client.sandboxes.pause_and_wait(
            sb.id, progress=lambda s, t: seen.append((s.status, s.paused, t)))
        self.assertTrue(out.paused)
        self.assertGreaterEqual(len(seen), 1)  # 1 when the pause committed before the first poll
        self.assertEqual(seen[-1][:2], (s0.SandboxStatus.PAUSED, True))
        self.assertTrue(all(isinstance(x[2], float) for x in seen))
        # returning False stops the wait (UserAbortError)
        with self.assertRaises(errors.UserAbortError):
            self.client.sandboxes.resume_and_wait(sb.id, progress=lambda s, t: False)
        # an exception in the callback propagates as is
        self.client.sandboxes.pause_and_wait(sb.id)

        def boom(s, t):
            raise LookupError("from the callback")

        with self.assertRaises(LookupError):
            self.client.sandboxes.resume_and_wait(sb.id, progress=boom)
        self.settle()
        self.client.sandboxes.delete(sb.id)

    def test_resume_unavailable_keeps_paused(self) -> None:
        """'carrier' fault: the resume fails as unavailable, the sandbox stays
        paused with its committed head and generation."""
        sb = self.claim()
        self.client.files.write(sb.id, "/workspace/x", b"1")
        p = self.client.sandboxes.pause_and_wait(sb.id)
        self.backend.arm_fault("carrier", count=1)
        with self.assertRaises(errors.UnavailableError) as cm:
            self.client.sandboxes.resume_and_wait(sb.id, memory=True)
        self.assertIn("carrier", cm.exception.message)
        self.assertEqual(cm.exception.status_code, 503)
        after = self.client.get_sandbox(sb.id)
        self.assertEqual((after.status, after.paused), ("paused", True))
        self.assertEqual(after.runtime_generation, p.runtime_generation)
        r = self.client.sandboxes.resume_and_wait(sb.id)
        self.assertEqual(self.client.files.read(sb.id, "/workspace/x"), b"1")
        self.assertEqual(r.status, "running")
        self.client.sandboxes.delete(sb.id)


if __name__ == "__main__":
    unittest.main()
