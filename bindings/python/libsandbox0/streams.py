"""Streams: a context's output and input, a session attach, a file watch.

The C library's streams (``sandbox0/streams.h``) over both transports: a
WebSocket to ``s0 serve`` (or any Sandbox0 API) on an HTTP client, the
in-process stream on a :class:`~libsandbox0.LocalBackend` client. Messages
are the JSON objects of docs/wire.md §8.2, decoded to dicts, in the order
the server sent them::

    with client.contexts.stream(sandbox_id, ctx["id"]) as s:
        s.send_input("echo hi\\n", request_id="r1")
        for msg in s:                        # {"type": "output", ...}, {"type": "done", ...}
            if msg["type"] == "done":
                break

Iteration ends when the stream does (the process exited: close code 1000;
the sandbox paused or was deleted: 1001 — open a new stream after a
resume); :attr:`Stream.close_code` and :attr:`Stream.close_reason` say why.
A wait holds no GIL; :meth:`Stream.close` may be called from any thread
and ends a blocked iteration within :data:`SLICE_SEC`. Closing only
detaches: the process goes on. Closing the client or the backend closes its
streams.
"""
from __future__ import annotations

import collections
import json
import time
from typing import TYPE_CHECKING, Any, Deque, Dict, Iterator, Mapping, Optional, Union

from ._errbase import Sandbox0Error

if TYPE_CHECKING:  # pragma: no cover
    from . import capi

__all__ = ["Stream", "ContextStream", "SessionStream", "FileWatch", "SLICE_SEC"]

KIND_CONTEXT = 1
KIND_SESSION = 2
KIND_FILES_WATCH = 3

#: How long one native wait lasts (seconds): the GIL is taken back between
#: waits, so Ctrl-C and close() from another thread act within this time.
SLICE_SEC = 0.05

_MSG, _NONE, _END = 0, 1, 2


class Stream:
    """One open stream; an iterator of message dicts and a context manager.
    One thread at a time may iterate, send and receive; :meth:`close` is
    safe from any thread."""

    def __init__(self, native: "capi.CStream") -> None:
        self._native = native
        self._pending: Deque[Dict[str, Any]] = collections.deque()

    def _recv_native(self, timeout: Optional[float]) -> Optional[Dict[str, Any]]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if deadline is None:
                ms = int(SLICE_SEC * 1000)
            else:
                ms = max(0, min(int(SLICE_SEC * 1000), int((deadline - time.monotonic()) * 1000)))
            r = self._native.recv(ms)
            code, text = (r, None) if isinstance(r, int) else (r[0], r[1])
            if code == _MSG:
                msg = json.loads(text or "null")
                if not isinstance(msg, dict):
                    raise ValueError("the stream sent a message that is not a JSON object")
                return msg
            if code == _END:
                return None
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"no stream message within {timeout} s")

    def recv(self, timeout: Optional[float] = None) -> Optional[Dict[str, Any]]:
        """The next message, waiting up to ``timeout`` seconds (None: until
        one comes or the stream ends); None once the stream has ended.

        :raises TimeoutError: nothing came within ``timeout`` (the stream goes on).
        """
        if self._pending:
            return self._pending.popleft()
        return self._recv_native(timeout)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return self

    def __next__(self) -> Dict[str, Any]:
        msg = self.recv()
        if msg is None:
            raise StopIteration
        return msg

    def send(self, message: Mapping[str, Any]) -> None:
        """Send one client message (a JSON object).

        :raises GoneError: ``stream_closed``, the stream has ended.
        :raises InvalidArgumentError: over 64 KiB.
        """
        self._native.send(json.dumps(dict(message)))

    @property
    def close_code(self) -> int:
        """RFC 6455 close code: 0 while the stream goes on (or after
        :meth:`close`), 1000 the process exited, 1001 the sandbox paused or
        was deleted, 1007 a bad message was sent, 1011 the backend failed."""
        return self._native.close_code()

    @property
    def close_reason(self) -> str:
        """Why the stream ended ("sandbox paused", …); "" when none."""
        return self._native.close_reason() or ""

    @property
    def closed(self) -> bool:
        return self._native.closed()

    def close(self) -> None:
        """Detach (the process goes on); waits for a receive in flight, at
        most :data:`SLICE_SEC`. Idempotent, safe from any thread."""
        self._native.close()

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<libsandbox0.{type(self).__name__} {'closed' if self.closed else 'open'}>"


class ContextStream(Stream):
    """A context's output (``{"type":"output","source":"stdout"|"stderr"|"pty",
    "data"}``), ``done`` per input with a ``request_id``, and a terminal
    ``done`` with ``exit_code`` and ``state``."""

    def send_input(self, data: str, request_id: Optional[str] = None) -> None:
        """Write ``data`` to the process's stdin (a REPL runs a line); a
        ``request_id`` gets its own ``done`` after the output it made."""
        msg: Dict[str, Any] = {"type": "input", "data": data}
        if request_id is not None:
            msg["request_id"] = request_id
        self.send(msg)

    def signal(self, signal: str) -> None:
        """Send a signal by name (``"INT"``, ``"TERM"``, ``"KILL"``…)."""
        self.send({"type": "signal", "signal": signal})

    def resize(self, rows: int, cols: int) -> None:
        """Resize the context's terminal."""
        self.send({"type": "resize", "rows": rows, "cols": cols})


class SessionStream(Stream):
    """A supervised session's events (``{"type":"event","event":{...,"seq"}}``)
    from the cursor on; inputs and signals are answered by ``ack`` or
    ``error`` messages carrying their ``request_id``."""

    def send_input(self, data: Union[bytes, str] = b"", *, input_id: str,
                   eof: bool = False, expected_attempt_id: Optional[str] = None,
                   request_id: Optional[str] = None) -> None:
        """Write to the session's stdin (``input_id`` makes a retry idempotent)."""
        import base64

        if isinstance(data, str):
            data = data.encode("utf-8")
        msg: Dict[str, Any] = {"type": "input", "input_id": input_id}
        if data:
            msg["data_base64"] = base64.b64encode(data).decode("ascii")
        if eof:
            msg["eof"] = True
        if expected_attempt_id is not None:
            msg["expected_attempt_id"] = expected_attempt_id
        if request_id is not None:
            msg["request_id"] = request_id
        self.send(msg)

    def signal(self, signal: str, request_id: Optional[str] = None) -> None:
        msg: Dict[str, Any] = {"type": "signal", "signal": signal}
        if request_id is not None:
            msg["request_id"] = request_id
        self.send(msg)


class FileWatch(Stream):
    """File changes under subscribed paths: iteration yields
    ``{"type":"event","watch_id","event":"create"|"write"|"remove"|"rename"|
    "chmod"|"invalidate","path"}`` messages (and ``error`` ones)."""

    def subscribe(self, path: str, recursive: bool = False,
                  timeout: Optional[float] = 30.0) -> str:
        """Watch ``path`` and return the watch id once the server confirmed;
        messages that came first are kept for the iteration.

        :raises Sandbox0Error: the server refused it (e.g. a missing path).
        :raises GoneError: the stream has ended.
        """
        self.send({"action": "subscribe", "path": path, "recursive": bool(recursive)})
        return self._reply("subscribed", timeout)["watch_id"]

    def unsubscribe(self, watch_id: str, timeout: Optional[float] = 30.0) -> None:
        self.send({"action": "unsubscribe", "watch_id": watch_id})
        self._reply("unsubscribed", timeout)

    def _reply(self, want: str, timeout: Optional[float]) -> Dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        early = []
        try:
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                msg = self._recv_native(left)
                if msg is None:
                    from .errors import GoneError

                    raise GoneError(f"the stream ended ({self.close_code} {self.close_reason})",
                                    reason="stream_closed")
                if msg.get("type") == want:
                    return msg
                if msg.get("type") == "error":
                    err = msg.get("error")
                    text = err.get("message", str(err)) if isinstance(err, dict) else str(err)
                    raise Sandbox0Error(text, reason="watch_refused")
                early.append(msg)
        finally:
            self._pending.extend(early)
