"""Streams (libsandbox0.streams) over both transports: the in-process stream
of a LocalBackend client and a WebSocket to the same backend served over
HTTP in process (LocalBackend.serve, the `s0 serve` server). Output order,
input echo, signals, session replay from a cursor, file watch events, a
close from another thread mid-stream, an unknown sandbox."""
from __future__ import annotations

import threading
import time
import unittest
from typing import Any, Dict, List

import libsandbox0 as s0
from _support import BackendCase

API_KEY = "s0_pystreams_key_0001"


class StreamCases:
    """The cases; subclasses set self.sc (the client under test)."""

    sc: s0.Client
    client: s0.Client

    def claim(self, **kw: Any) -> s0.SandboxDetails:  # type: ignore[override]
        return self.sc.sandboxes.claim(**kw)

    def test_ST01_context_output_order_and_exit(self) -> None:
        sb = self.claim()
        ctx = self.sc.contexts.create(sb.id, command=["sh", "-c", "echo one; echo two >&2; echo three"])
        with self.sc.contexts.stream(sb.id, ctx["id"]) as s:
            msgs = list(s)
            self.assertEqual(s.close_code, 1000)
            self.assertEqual(s.close_reason, "process exited")
        self.assertEqual([(m["type"], m.get("source"), m.get("data")) for m in msgs[:2]],
                         [("output", "stdout", "one\nthree\n"), ("output", "stderr", "two\n")])
        self.assertEqual(msgs[2]["type"], "done")
        self.assertEqual((msgs[2]["exit_code"], msgs[2]["state"]), (0, "stopped"))
        self.assertEqual(len(msgs), 3)

    def test_ST01_input_echo_and_signal(self) -> None:
        sb = self.claim()
        ctx = self.sc.contexts.create(sb.id)
        with self.sc.contexts.stream(sb.id, ctx["id"]) as s:
            s.send_input("echo hello\n", request_id="r1")
            s.send_input("echo world\n", request_id="r2")
            got = [s.recv(timeout=30) for _ in range(4)]
            self.assertEqual([(m["type"], m.get("data") or m.get("request_id")) for m in got],
                             [("output", "hello\n"), ("done", "r1"), ("output", "world\n"),
                              ("done", "r2")])
            s.signal("KILL")
            last = list(s)
            self.assertEqual((last[-1]["type"], last[-1]["exit_code"], last[-1]["state"]),
                             ("done", 137, "killed"))
            self.assertEqual(s.close_code, 1000)
            with self.assertRaises(s0.GoneError):
                s.send_input("echo late\n")

    def test_ST02_session_attach_replays_from_a_cursor(self) -> None:
        sb = self.claim()
        ses = self.sc.sessions.create(sb.id, ["sh", "-c", "echo a; echo b; echo c"])
        seqs: List[int] = []
        with self.sc.sessions.attach(sb.id, ses["id"]) as s:
            while True:
                try:
                    m = s.recv(timeout=0.5)
                except TimeoutError:
                    break
                if m is None:
                    break
                self.assertEqual(m["type"], "event")
                seqs.append(m["event"]["seq"])
        self.assertGreaterEqual(len(seqs), 3)
        self.assertEqual(seqs, sorted(seqs))
        with self.sc.sessions.attach(sb.id, ses["id"], after=seqs[1]) as tail:
            replay = [tail.recv(timeout=30)["event"]["seq"] for _ in seqs[2:]]  # type: ignore[index]
            self.assertEqual(replay, seqs[2:])
            with self.assertRaises(TimeoutError):
                tail.recv(timeout=0)
        with self.assertRaises(s0.InvalidArgumentError):
            self.sc.sessions.attach(sb.id, ses["id"], after=-1)

    def test_ST03_FS05_watch_events_on_write_and_remove(self) -> None:
        sb = self.claim()
        self.sc.files.mkdir(sb.id, "/workspace/d")
        with self.sc.files.watch(sb.id, "/workspace/d") as w:
            self.sc.files.write(sb.id, "/workspace/d/f", b"1")
            self.sc.files.write(sb.id, "/workspace/other", b"1")
            self.sc.files.delete(sb.id, "/workspace/d/f")
            got = [w.recv(timeout=30) for _ in range(3)]
            self.assertEqual([(m["event"], m["path"]) for m in got],  # type: ignore[index]
                             [("create", "/workspace/d/f"), ("write", "/workspace/d/f"),
                              ("remove", "/workspace/d/f")])
            with self.assertRaises(s0.Sandbox0Error) as cm:
                w.subscribe("/workspace/none")
            self.assertEqual(cm.exception.reason, "watch_refused")
            # a pause ends the stream with 1001; iteration stops
            self.sc.sandboxes.pause_and_wait(sb.id)
            self.assertEqual(list(w), [])
            self.assertEqual((w.close_code, w.close_reason), (1001, "sandbox paused"))

    def test_close_from_another_thread_mid_stream(self) -> None:
        sb = self.claim()
        ctx = self.sc.contexts.create(sb.id)
        s = self.sc.contexts.stream(sb.id, ctx["id"])
        s.send_input("echo started\n", request_id="r1")
        self.assertEqual(s.recv(timeout=30)["data"], "started\n")  # type: ignore[index]
        self.assertEqual(s.recv(timeout=30), {"type": "done", "request_id": "r1"})
        seen: List[Dict[str, Any]] = []
        ended = threading.Event()

        def iterate() -> None:
            for m in s:  # blocks: nothing more comes
                seen.append(m)
            ended.set()

        t = threading.Thread(target=iterate)
        t.start()
        # the waiting iterator holds no GIL and no client lock: calls go on
        self.assertTrue(self.sc.contexts.get(sb.id, ctx["id"])["running"])
        t0 = time.monotonic()
        s.close()
        self.assertTrue(ended.wait(10))
        t.join()
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(seen, [])
        self.assertTrue(s.closed)
        s.close()  # idempotent
        # closing only detaches: the REPL goes on
        self.assertTrue(self.sc.contexts.get(sb.id, ctx["id"])["running"])

    def test_ST04_unknown_sandbox_and_context(self) -> None:
        with self.assertRaises(s0.NotFoundError):
            self.sc.contexts.stream("sb-nope", "ctx-nope")
        with self.assertRaises(s0.NotFoundError):
            self.sc.files.watch("sb-nope", "/workspace")
        sb = self.claim()
        with self.assertRaises(s0.NotFoundError) as cm:
            self.sc.contexts.stream(sb.id, "ctx-nope")
        self.assertEqual(cm.exception.reason, "context_not_found")


class LocalStreams(StreamCases, BackendCase):
    """In process (s0_stream_open on a LocalBackend client)."""

    manual_clock = False

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.sc = cls.client

    def test_facade_handle_streams(self) -> None:
        sbx = s0.Sandbox(self.claim().id, client=self.client)
        ctx = sbx.contexts.create(command=["echo", "hi"])
        with sbx.contexts.stream(ctx["id"]) as s:
            self.assertEqual([m["type"] for m in s], ["output", "done"])
        with sbx.files.watch("/workspace") as w:
            sbx.files.write("/workspace/n", "1")
            self.assertEqual(w.recv(timeout=30)["event"], "create")  # type: ignore[index]

    def test_closing_the_client_closes_its_streams(self) -> None:
        c = self.backend.client()
        sb = c.sandboxes.claim()
        w = c.files.watch(sb.id, "/workspace")
        c.close()
        self.assertIsNone(w.recv(timeout=5))
        self.assertTrue(w.closed)
        with self.assertRaises(s0.GoneError):
            w.subscribe("/workspace")


class HTTPStreams(StreamCases, BackendCase):
    """Over a WebSocket to the backend served in process (`s0 serve`)."""

    manual_clock = False

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.server = cls.backend.serve(API_KEY)
        cls.sc = s0.Client(token=API_KEY, base_url=cls.server.base_url)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.sc.close()
        cls.server.close()
        super().tearDownClass()

    def test_bad_key_is_refused(self) -> None:
        with s0.Client(token="s0_not_a_known_key", base_url=self.server.base_url) as bad:
            with self.assertRaises(s0.Sandbox0Error) as cm:
                bad.files.watch("sb-nope")
            self.assertEqual(cm.exception.status_code, 401)


if __name__ == "__main__":
    unittest.main()
