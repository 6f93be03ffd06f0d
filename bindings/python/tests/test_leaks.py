"""No C objects and no Python memory leak after 10,000 calls."""
from __future__ import annotations

import gc
import sys
import tracemalloc
import unittest

import libsandbox0 as s0
from libsandbox0 import errors

from _support import BackendCase

CALLS = 10_000


class Leaks(BackendCase):
    def _mix(self, sid: str, n: int) -> None:
        c = self.client
        for i in range(n):
            k = i % 10
            if k == 0:
                c.sandboxes.get(sid)
            elif k == 1:
                c.sandboxes.list(limit=5)
            elif k == 2:
                c.files.stat(sid, "/workspace/f")
            elif k == 3:
                c.files.read(sid, "/workspace/f")
            elif k == 4:
                try:
                    c.sandboxes.get("sb_missing")
                except errors.NotFoundError as e:
                    assert e.status_code == 404
            elif k == 5:
                c.files.write(sid, "/workspace/f", b"x" * 64)
            elif k == 6:
                c.files.list(sid, "/workspace")
            elif k == 7:
                c.snapshots.list(sid)
            elif k == 8:
                c.sandboxes.status(sid)
            else:
                try:
                    c.files.read(sid, "/workspace/missing")
                except errors.NotFoundError:
                    pass

    def test_10000_calls_leak_nothing(self) -> None:
        sb = self.client.sandboxes.claim()
        self.client.files.write(sb.id, "/workspace/f", b"x" * 64)
        self._mix(sb.id, 1000)  # warm caches, interned strings, code paths
        gc.collect()
        live0 = s0.live_objects()
        tracemalloc.start()
        snap0 = tracemalloc.take_snapshot()
        self._mix(sb.id, CALLS)
        gc.collect()
        snap1 = tracemalloc.take_snapshot()
        tracemalloc.stop()
        growth = sum(st.size_diff for st in snap1.compare_to(snap0, "filename"))
        self.assertEqual(s0.live_objects(), live0, "C objects leaked")
        self.assertLess(growth, 64 * 1024, f"Python memory grew by {growth} bytes")
        self.client.sandboxes.delete(sb.id)

    def test_waits_and_callbacks_leak_nothing(self) -> None:
        sb = self.client.sandboxes.claim()

        def progress(s: s0.SandboxDetails, t: float) -> None:
            return None

        gc.collect()
        live0 = s0.live_objects()
        refs0 = sys.getrefcount(progress)
        for _ in range(50):
            self.client.sandboxes.pause_and_wait(sb.id, progress=progress)
            self.client.sandboxes.resume_and_wait(sb.id, progress=progress)
            try:
                self.client.sandboxes.wait(sb.id, until="paused", fail="running")
            except errors.SandboxLifecycleFailedError as e:
                assert e.last_sandbox is not None
            try:
                self.client.sandboxes.wait(sb.id, until="paused",
                                           progress=lambda s, t: (_ for _ in ()).throw(KeyError()))
            except KeyError:
                pass
        gc.collect()
        self.assertEqual(sys.getrefcount(progress), refs0)
        self.assertEqual(s0.live_objects(), live0)
        self.client.sandboxes.delete(sb.id)

    def test_objects_freed_with_their_proxies(self) -> None:
        gc.collect()
        live0 = s0.live_objects()
        with s0.LocalBackend(manual_clock=True) as b:
            c = b.client()
            sb = c.sandboxes.claim()
            tok = s0.CancelToken()
            it = c.sandboxes.iter()
            next(it)
            self.assertGreater(s0.live_objects(), live0)
            del it, tok, c
        gc.collect()
        self.assertEqual(s0.live_objects(), live0)


if __name__ == "__main__":
    unittest.main()
