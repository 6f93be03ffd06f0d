"""Threads, the GIL, Ctrl-C and cancellation."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading
import time
import unittest

import libsandbox0 as s0
from libsandbox0 import errors

from _support import BackendCase


class EightThreads(BackendCase):
    def test_eight_threads_share_one_client(self) -> None:
        """8 Python threads drive full cycles through one client at once."""
        gc.collect()  # objects of earlier tests still waiting for the collector
        base = s0.live_objects()
        failures = []
        done = []

        def worker(n: int) -> None:
            try:
                for round_ in range(3):
                    sb = self.client.sandboxes.claim()
                    path = f"/workspace/t{n}-{round_}.txt"
                    self.client.files.write(sb.id, path, f"{n}:{round_}")
                    self.client.sandboxes.pause_and_wait(sb.id)
                    r = self.client.sandboxes.resume_and_wait(sb.id)
                    assert r.status == "running", r
                    assert self.client.files.read(sb.id, path) == f"{n}:{round_}".encode()
                    try:
                        self.client.sandboxes.get(sb.id + "x")
                    except errors.NotFoundError:
                        pass
                    self.client.sandboxes.delete(sb.id)
                    done.append(n)
            except BaseException as e:  # noqa: BLE001 - reported below
                failures.append((n, e))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(failures, [])
        self.assertEqual(len(done), 24)
        self.settle()
        gc.collect()
        self.assertEqual(s0.live_objects(), base)


class GilAndCancel(unittest.TestCase):
    """Real clock: a blocked wait must not hold the GIL, and must stop at once
    when cancelled or when its client is closed."""

    def setUp(self) -> None:
        self.backend = s0.LocalBackend()
        self.client = self.backend.client()
        self.sb = self.client.sandboxes.claim()
        self.backend.arm_fault("node_channel", count=0)  # pause accepted (202), never done

    def tearDown(self) -> None:
        self.backend.release_fault("node_channel")
        self.backend.close()

    def test_gil_released_during_a_blocking_wait(self) -> None:
        counter = [0]
        stop = threading.Event()

        def spin() -> None:
            while not stop.is_set():
                counter[0] += 1

        th = threading.Thread(target=spin)
        th.start()
        t0 = time.monotonic()
        with self.assertRaises(errors.SandboxWaitTimeoutError):
            self.client.sandboxes.pause_and_wait(self.sb.id, timeout_sec=0.6)
        elapsed = time.monotonic() - t0
        stop.set()
        th.join()
        self.assertGreaterEqual(elapsed, 0.55)
        self.assertGreater(counter[0], 10000)  # Python kept running meanwhile

    def test_cancel_token_from_another_thread(self) -> None:
        tok = s0.CancelToken()
        threading.Timer(0.2, tok.cancel).start()
        t0 = time.monotonic()
        with self.assertRaises(errors.CanceledError):
            self.client.sandboxes.pause_and_wait(self.sb.id, timeout_sec=30, cancel=tok)
        self.assertLess(time.monotonic() - t0, 2.0)
        tok.reset()
        self.assertFalse(tok.canceled)

    def test_close_cancels_calls_in_flight(self) -> None:
        other = self.backend.client()
        box = {}

        def waiter() -> None:
            try:
                other.sandboxes.pause_and_wait(self.sb.id, timeout_sec=30)
            except BaseException as e:  # noqa: BLE001
                box["e"] = e

        th = threading.Thread(target=waiter)
        th.start()
        time.sleep(0.2)
        t0 = time.monotonic()
        other.close()
        th.join(5)
        self.assertLess(time.monotonic() - t0, 2.0)
        self.assertIsInstance(box.get("e"), errors.CanceledError)
        with self.assertRaises(errors.InvalidArgumentError) as cm:
            other.sandboxes.get(self.sb.id)
        self.assertEqual(cm.exception.reason, "closed")

    def test_backend_close_closes_its_clients(self) -> None:
        b = s0.LocalBackend()
        c = b.client()
        c.sandboxes.claim()
        b.close()
        self.assertTrue(c.closed)
        with self.assertRaises(errors.InvalidArgumentError):
            c.sandboxes.list()
        c.close()  # idempotent


SIGINT_SCRIPT = textwrap.dedent('''
    import os, signal, sys, threading, time
    import libsandbox0 as s0

    mode = sys.argv[1]
    if mode == "custom":
        signal.signal(signal.SIGINT, lambda *a: print("handler ran", flush=True))
    with s0.LocalBackend() as b:
        c = b.client()
        sb = c.sandboxes.claim()
        b.arm_fault("node_channel", count=0)
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        t0 = time.monotonic()
        try:
            c.sandboxes.pause_and_wait(sb.id, timeout_sec=60)
            print("RESULT no-interrupt")
        except KeyboardInterrupt:
            print("RESULT KeyboardInterrupt %.3f" % (time.monotonic() - t0))
        except s0.CanceledError:
            print("RESULT CanceledError %.3f" % (time.monotonic() - t0))
        b.release_fault("node_channel")
        # the client is usable again (its token was re-armed)
        print("AFTER", c.sandboxes.pause_and_wait(sb.id, timeout_sec=30).status)
''')


class CtrlC(unittest.TestCase):
    def _run(self, mode: str) -> str:
        p = subprocess.run([sys.executable, "-c", SIGINT_SCRIPT, mode], capture_output=True,
                           text=True, timeout=60, env=dict(os.environ))
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_ctrl_c_interrupts_a_wait_promptly(self) -> None:
        out = self._run("default")
        line = [x for x in out.splitlines() if x.startswith("RESULT")][0]
        kind, secs = line.split()[1], float(line.split()[2])
        self.assertEqual(kind, "KeyboardInterrupt")
        self.assertLess(secs, 1.5)
        self.assertIn("AFTER paused", out)

    def test_custom_sigint_handler_that_does_not_raise(self) -> None:
        """A handler that returns: the wait ends as CanceledError, the handler ran."""
        out = self._run("custom")
        self.assertIn("handler ran", out)
        self.assertIn("RESULT CanceledError", out)
        self.assertIn("AFTER paused", out)


if __name__ == "__main__":
    unittest.main()
