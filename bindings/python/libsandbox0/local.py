"""The embedded local reference backend (``s0_local``) for tests and offline use.

A :class:`LocalBackend` runs the Sandbox0 server side in this process: a
durable lifecycle engine (SQLite), a copy-on-write block store holding each
sandbox's ext4 RootFS, a simulated runtime, TTLs, auto-resume, snapshots,
fork, restore and named fault points. Clients made by :meth:`client` behave
exactly as over HTTP. One process may open a data directory at a time.

Memory checkpoints are implemented: a memory pause (``memory=True``)
captures the simulated guest (processes and their PIDs, heaps, context and
shell state, the /tmp tmpfs) into a retained image next to the committed
RootFS; a memory resume, or an auto-resume wake, restores it into a new
runtime. Without a matching compatible image (e.g. after a filesystem-only
or TTL pause) a memory resume starts fresh processes from the committed
RootFS. Fault points ``prepare_stall``, ``upload_budget_hold``,
``capture@authorize|after-authorize|commit``, ``capture_uncertain`` and
``restore`` (:meth:`LocalBackend.arm_fault`) inject capture and restore
failures; see docs/local-backend.md "Memory pause and resume".
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import weakref
from datetime import datetime
from typing import Any, Dict, Iterator, Optional, Sequence, Union

from . import capi
from ._util import duration_ms, from_unix_ms, invalid, timeout_ms, to_unix_ms
from .client import Client

_FAULT_MODES = {"fail": capi.FAULT_FAIL, "hold": capi.FAULT_HOLD, "delay": capi.FAULT_DELAY,
                "crash": capi.FAULT_CRASH}


class LocalBackend:
    """An embedded backend on a data directory; a context manager.

    :param path: data directory (created); None = a fresh temporary
        directory removed at :meth:`close`.
    :param manual_clock: run on a manual clock (tests): time moves only with
        :meth:`advance_clock`, and waits of its clients advance it virtually.
    :param clock_start: start of the manual clock (datetime or epoch
        seconds; None = now).
    :param node_cpu_millis, node_memory_bytes, warm_carriers,
        max_active_runtimes, rootfs_size_bytes: capacity knobs (0 = defaults:
        8000 m, 16 GiB, 16 carriers, 64 running sandboxes, 1 GiB RootFS).
    :param team_id: team of its clients (default ``team_local``).
    :param zero_time_compat: emit ``0001-01-01T00:00:00Z`` for unset expiries.
    :param continuous_run_limit_sec: longest continuous run of one runtime
        generation (the UCloud document's 24 h is 86400); when reached the
        sandbox's timeout action runs (a filesystem pause, or the delete when
        its timeout is a hard deadline); a resume starts the count again.
        0 = no limit (the default).
    :raises ConflictError: reason ``data_dir_locked``: another process holds it.
    :raises StorageIOError: the directory cannot be used.
    """

    def __init__(self, path: Union[None, str, "os.PathLike[str]"] = None,
                 manual_clock: bool = False, *, clock_start: Any = None,
                 node_cpu_millis: int = 0, node_memory_bytes: int = 0, warm_carriers: int = 0,
                 max_active_runtimes: int = 0, rootfs_size_bytes: int = 0,
                 team_id: Optional[str] = None, zero_time_compat: bool = False,
                 continuous_run_limit_sec: float = 0) -> None:
        self._tmp: Optional[str] = None
        if path is None:
            self._tmp = path = tempfile.mkdtemp(prefix="libsandbox0-")
        try:
            self._native = capi.local_open(
                os.fspath(path), manual_clock=1 if manual_clock else 0,
                manual_clock_start_unix_ms=to_unix_ms(clock_start, "clock_start"),
                node_cpu_millis=node_cpu_millis, node_memory_bytes=node_memory_bytes,
                warm_carriers=warm_carriers, max_active_runtimes=max_active_runtimes,
                rootfs_size_bytes=rootfs_size_bytes, team_id=team_id,
                zero_time_compat=1 if zero_time_compat else 0,
                continuous_run_limit_ms=duration_ms(continuous_run_limit_sec,
                                                    "continuous_run_limit_sec"))
        except BaseException:
            if self._tmp:
                shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        self.path: str = os.fspath(path)
        self.manual_clock: bool = manual_clock
        self._team_id: str = team_id or "team_local"
        # a temporary directory goes away even when close() is never called
        self._finalizer = weakref.finalize(self, LocalBackend._cleanup, self._native, self._tmp)

    @staticmethod
    def _cleanup(native: "capi.CLocal", tmp: Optional[str]) -> None:
        native.close()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    def client(self, *, user_agent: Optional[str] = None) -> Client:
        """A client over this backend in process (no sockets). It is closed
        with the backend; every endpoint, wait and error behaves as over HTTP."""
        return Client(_native=self._native.client(user_agent=user_agent), _backend=self)

    def serve(self, api_key: str, team_id: Optional[str] = None) -> "LocalServer":
        """Serve this backend over HTTP in process, as ``s0 serve`` does
        (127.0.0.1, an ephemeral port; the WebSocket stream routes included),
        accepting one API key. ``Client(token=api_key,
        base_url=server.base_url)`` then sees this backend's sandboxes of
        ``team_id`` (default the backend's team, ``team_local``). Stopped by
        :meth:`LocalServer.close` or by closing the backend.

        :raises InvalidArgumentError: a key not starting with ``s0_`` (8+ characters after it).
        """
        native = self._native.serve(api_key=api_key, team_id=team_id or self._team_id)
        return LocalServer(native, f"http://127.0.0.1:{native.port()}")

    def arm_fault(self, name: str, count: int = 1, mode: Union[str, int] = "fail",
                  delay_sec: float = 0.0) -> None:
        """Arm a named fault point (docs/behaviours.md "Fault points"): ``carrier``,
        ``capacity``, ``nbd_device``, ``node_channel``, ``object_store``,
        ``meta_store``, ``procd_not_ready``, ``resume_delay``,
        ``manager_restart``… (``name@step`` narrows to a step).

        :param count: hits affected (fail, delay); 0 = until released.
        :param mode: ``"fail"`` (the next ``count`` hits fail), ``"hold"``
            (hits block until released), ``"delay"`` (hits wait
            ``delay_sec`` on the backend clock), ``"crash"`` (SIGKILL).
        :raises InvalidArgumentError: a name (or ``name@step``) that is not a
            fault point of the backend, or a bad mode or count.
        """
        m = _FAULT_MODES.get(mode, None) if isinstance(mode, str) else mode
        if m is None:
            raise invalid(f"unknown fault mode {mode!r}; expected one of {sorted(_FAULT_MODES)}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise invalid("count must be an int >= 0")
        delay_ms = int(round(delay_sec * 1000)) if delay_sec else 0
        self._native.fault_arm(name, mode=m, count=count, delay_ms=delay_ms)

    def release_fault(self, name: str) -> None:
        """Disarm a fault point and release what it holds (unknown names are fine)."""
        self._native.fault_release(name)

    def advance_clock(self, seconds: float) -> None:
        """Advance the manual clock and run the controllers that became due
        (TTL pauses, hard-TTL deletes, snapshot expiry); use :meth:`quiesce`
        to wait for the operations they start.

        :raises UnsupportedError: not opened with ``manual_clock``.
        """
        if seconds < 0:
            raise invalid("seconds must be >= 0")
        self._native.clock_advance_ms(int(round(seconds * 1000)))

    @property
    def now_unix_ms(self) -> int:
        """The backend clock in ms since the epoch."""
        return self._native.now_unix_ms()

    def now(self) -> datetime:
        """The backend clock as an aware UTC datetime."""
        dt = from_unix_ms(self._native.now_unix_ms())
        assert dt is not None
        return dt

    def quiesce(self, timeout_sec: float = 10.0) -> None:
        """Wait (real time) until no background operation is runnable.

        :raises RequestTimeoutError: work was still running at the timeout.
        """
        self._native.quiesce(timeout_ms=timeout_ms(timeout_sec))

    def inspect(self, sandbox_id: Optional[str] = None) -> Dict[str, Any]:
        """Internal facts as a dict: node capacity and leases, runtimes,
        operation records, storage counters (per sandbox when given)."""
        text = self._native.inspect(sandbox_id=sandbox_id)
        return json.loads(text) if text else {}

    def restart_manager(self) -> None:
        """Simulate a manager restart: reload lifecycle state from the
        metadata store while runtimes survive."""
        self._native.restart_manager()

    def gc(self) -> None:
        """Collect garbage in the block and object stores."""
        self._native.gc()

    def build_template(self, name: str, directory: Union[None, str, "os.PathLike[str]"] = None,
                       *, size_bytes: int = 0,
                       ephemeral_mounts: Optional[Sequence[str]] = None) -> None:
        """Build (or rebuild) template ``name`` from a directory tree
        (None = the standard empty tree); ``ephemeral_mounts`` are
        runtime-only paths."""
        self._native.template_build(name, os.fspath(directory) if directory else None,
                                    size_bytes=size_bytes,
                                    ephemeral_mounts=list(ephemeral_mounts)
                                    if ephemeral_mounts is not None else None)

    @contextlib.contextmanager
    def as_default(self) -> Iterator[Client]:
        """Make a client of this backend the default of the UCloud-style
        facade (:class:`libsandbox0.Sandbox`) inside the ``with`` block."""
        from . import facade

        client = self.client()
        previous = facade.set_default_client(client)
        try:
            yield client
        finally:
            facade.set_default_client(previous)
            client.close()

    @property
    def closed(self) -> bool:
        return self._native.closed()

    def close(self) -> None:
        """Close its clients, let in-flight operations reach a durable point
        and close the backend; removes a temporary directory. Idempotent."""
        self._finalizer()

    def __enter__(self) -> "LocalBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<libsandbox0.LocalBackend {self.path}{' (closed)' if self.closed else ''}>"


class LocalServer:
    """A :meth:`LocalBackend.serve` server; a context manager."""

    def __init__(self, native: "capi.CServer", base_url: str) -> None:
        self._native = native
        self.base_url: str = base_url

    def close(self) -> None:
        """Stop serving (requests in flight finish first). Idempotent."""
        self._native.close()

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
