"""A UCloud/E2B-style facade over the client (UC-01..UC-16).

::

    from libsandbox0 import Sandbox, SandboxQuery, SandboxState

    sbx = Sandbox.create(timeout=600, lifecycle={"on_timeout": "pause"})
    sbx.pause()                       # memory pause, waits until paused
    same = Sandbox.connect(sbx.sandbox_id, timeout=60)
    same.kill()                       # or Sandbox.kill(sandbox_id)

How it maps onto Sandbox0 (docs/wire.md §6.10, behaviours UC-01..UC-12):

- ``create(timeout=t, lifecycle={"on_timeout": "kill"})`` (the default) claims
  with ``ttl = 0, hard_ttl = t``: at the timeout the sandbox is deleted;
  ``on_timeout: "pause"`` claims with ``ttl = t, hard_ttl = 0``: every timeout
  pauses it (filesystem-only, like every TTL pause) and a paused sandbox is
  kept until killed. ``t`` defaults to 300 s; template ``"default"``.
  ``auto_resume`` (UCloud default False) is always sent explicitly.
- ``pause()`` is a **memory** pause (``{"memory": true}``) waited for up to
  360 s: processes, variables and memory data are retained. A capture
  failure (:class:`SandboxLifecycleFailedError`, status ``failed``) or a
  deployment without memory checkpoints (503 ``unavailable``) raises; it
  never falls back to a filesystem pause.
- ``connect(id, timeout=t)`` resumes a paused sandbox with memory (restoring
  the retained image; fresh processes from the committed RootFS when there
  is none, e.g. after a TTL pause) and waits,
  then resets the timeout to ``t`` (default 300 s): ``refresh`` with that
  duration for ``on_timeout: pause``, an ``update`` of ``hard_ttl`` for
  ``on_timeout: kill`` (a refresh would arm a soft pause instead).
- ``kill()`` deletes; killing an unknown or killed id raises NotFoundError.
- States: Running = ``running``/``starting``; Paused = ``paused`` true;
  Killed = 404 or ``terminating``; Snapshotting has no wire state (a
  snapshotted sandbox stays ``running``), so a query for it, or for Killed,
  lists nothing.

Which API: the client given as ``client=``, else the default set with
:func:`set_default_client` / :meth:`LocalBackend.as_default`, else
``SANDBOX0_BASE_URL`` / ``SANDBOX0_TOKEN`` when set, else the per-user local
server (:mod:`libsandbox0.localserver`).
"""
from __future__ import annotations

import enum
import functools
import math
import os
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Union

from ._util import invalid
from .client import Client
from .errors import NotFoundError
from .models import Sandbox as SandboxModel
from .models import FileInfo, SandboxStatus, Snapshot
from .streams import ContextStream, FileWatch

DEFAULT_TIMEOUT_SEC = 300
"""UCloud's default sandbox timeout (5 minutes)."""
MEMORY_WAIT_SEC = 360
"""Budget of the memory pause/resume waits (CL-14's example budget)."""
DEFAULT_TEMPLATE = "default"
DEFAULT_PAGE_SIZE = 100

_default_lock = threading.Lock()
_default_client: Optional[Client] = None
_auto_client: Optional[Client] = None


def set_default_client(client: Optional[Client]) -> Optional[Client]:
    """Make ``client`` the facade's default (None: back to automatic);
    returns the previous explicit default."""
    global _default_client
    with _default_lock:
        prev, _default_client = _default_client, client
    return prev


def default_client() -> Client:
    """The client the facade uses when none is passed (see the module doc).

    :raises Sandbox0Error: reason ``local_server_unavailable`` when no API is
        configured and no ``s0`` program can start the per-user server.
    """
    global _auto_client
    with _default_lock:
        if _default_client is not None:
            return _default_client
        if _auto_client is not None and not _auto_client.closed:
            return _auto_client
        if any(os.environ.get(k) for k in ("SANDBOX0_BASE_URL", "SANDBOX0_TOKEN",
                                           "SANDBOX0_API_KEY")):
            _auto_client = Client.from_env()
        else:
            from . import localserver

            _auto_client = localserver.connect()
        return _auto_client


class SandboxState(str, enum.Enum):
    """UCloud-style states (UC-06)."""

    RUNNING = "running"
    PAUSED = "paused"
    SNAPSHOTTING = "snapshotting"
    KILLED = "killed"

    def __str__(self) -> str:
        return self.value


def state_of(sandbox: Optional[SandboxModel]) -> SandboxState:
    """Map a wire sandbox (None = 404) to a :class:`SandboxState`: ``paused``
    true -> PAUSED; ``terminating`` or None -> KILLED; anything else
    (``running``, ``starting``, ``failed`` being recovered) -> RUNNING.
    SNAPSHOTTING is never observed: a snapshot keeps the wire status
    ``running`` (UC-06)."""
    if sandbox is None:
        return SandboxState.KILLED
    if sandbox.paused or sandbox.status == SandboxStatus.PAUSED:
        return SandboxState.PAUSED
    if sandbox.status == SandboxStatus.TERMINATING:
        return SandboxState.KILLED
    return SandboxState.RUNNING


def _seconds(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) \
            or value <= 0 or math.isinf(value) or value > 2**31 - 1:
        raise invalid(f"{name} must be a positive number of seconds")
    return int(math.ceil(value))


def claim_config(timeout: Optional[float] = None,
                 lifecycle: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The ``SandboxConfig`` fields ``Sandbox.create`` sends:
    ``{"ttl", "hard_ttl", "auto_resume"}`` (docs/wire.md §6.10)."""
    t = DEFAULT_TIMEOUT_SEC if timeout is None else _seconds(timeout, "timeout")
    lc = dict(lifecycle or {})
    unknown = set(lc) - {"on_timeout", "auto_resume"}
    if unknown:
        raise invalid(f"unknown lifecycle keys: {sorted(unknown)}")
    on_timeout = lc.get("on_timeout", "kill")
    if on_timeout not in ("pause", "kill"):
        raise invalid('lifecycle["on_timeout"] must be "pause" or "kill"')
    auto_resume = lc.get("auto_resume", False)
    if not isinstance(auto_resume, bool):
        raise invalid('lifecycle["auto_resume"] must be a bool')
    if on_timeout == "pause":
        return {"ttl": t, "hard_ttl": 0, "auto_resume": auto_resume}
    return {"ttl": 0, "hard_ttl": t, "auto_resume": auto_resume}


def _kill_on_timeout(sandbox: SandboxModel) -> bool:
    """A kill-on-timeout sandbox as ``Sandbox.create`` made it: a hard
    deadline and no soft (pause) one."""
    return sandbox.hard_expires_at is not None and sandbox.expires_at is None


def _reset_timeout(client: Client, sandbox: SandboxModel, timeout: int) -> None:
    """UC-04/UC-11: refresh(duration) for pause-on-timeout sandboxes, an
    update of hard_ttl for kill-on-timeout ones (hard deadline only).

    A running pause-on-timeout sandbox always has a soft deadline (ttl is
    re-armed on resume), so a running one without it is kill-on-timeout,
    including a kill-mode sandbox whose hard deadline ``pause`` cleared (it
    is re-armed here). A paused one (``set_timeout``) is only known to be
    kill-mode while its hard deadline is set."""
    if sandbox.expires_at is None and (sandbox.hard_expires_at is not None
                                       or not sandbox.paused):
        client.sandboxes.update(sandbox.id, hard_ttl=timeout)
    else:
        client.sandboxes.refresh(sandbox.id, duration=timeout)


def _pause(client: Client, sandbox_id: str) -> None:
    """Memory pause and wait; a kill-on-timeout sandbox then has its hard
    deadline cleared (hard_ttl=0): paused sandboxes remain until deleted
    (UC-10), and ``connect`` re-arms the deadline."""
    kill_mode = _kill_on_timeout(client.sandboxes.get(sandbox_id))
    client.sandboxes.pause_and_wait(sandbox_id, memory=True, timeout_sec=MEMORY_WAIT_SEC)
    if kill_mode:
        client.sandboxes.update(sandbox_id, hard_ttl=0)


@dataclass(frozen=True)
class SandboxInfo:
    """A sandbox as listed by :meth:`Sandbox.list` or :meth:`Sandbox.get_info`."""

    sandbox_id: str
    template_id: str
    state: SandboxState
    started_at: Optional[datetime]
    """Creation time."""
    end_at: Optional[datetime]
    """When the timeout acts: the soft expiry (pause) or the hard one (kill)."""
    sandbox: SandboxModel = field(repr=False, compare=False)
    """The full wire view."""

    @classmethod
    def _from(cls, sb: SandboxModel) -> "SandboxInfo":
        return cls(sb.id, sb.template_id, state_of(sb), sb.created_at,
                   sb.expires_at or sb.hard_expires_at, sb)


@dataclass
class SandboxQuery:
    """Filter of :meth:`Sandbox.list`. ``state``: the states to list (None =
    all). PAUSED lists ``paused=true``, RUNNING ``status=running``; several
    states are queried one by one and merged without duplicates."""

    state: Optional[Sequence[SandboxState]] = None


class SandboxPaginator:
    """Offset pages over one or more state queries (UC-08).

    ``next_items()`` returns the next non-empty page (``[]`` once drained);
    ``has_next`` mirrors the last page's ``has_more`` (and the queries left);
    the next offset is the previous offset plus the page length.
    """

    def __init__(self, client: Client, query: Optional[SandboxQuery], limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 200:
            raise invalid("limit must be between 1 and 200")
        self._client = client
        self._limit = limit
        self._plans: List[Dict[str, Any]] = []
        states = None if query is None or query.state is None else list(query.state)
        if states is None:
            self._plans.append({})
        else:
            for s in states:
                s = SandboxState(s)
                plan: Optional[Dict[str, Any]] = None
                if s == SandboxState.PAUSED:
                    plan = {"paused": True}
                elif s == SandboxState.RUNNING:
                    plan = {"status": SandboxStatus.RUNNING}
                if plan is not None and plan not in self._plans:
                    self._plans.append(plan)
        self._index = 0
        self._offset = 0
        self._seen: Set[str] = set()
        self.has_next: bool = bool(self._plans)

    @property
    def next_token(self) -> Optional[str]:
        """Opaque position (``"<query>:<offset>"``), None when drained."""
        return f"{self._index}:{self._offset}" if self.has_next else None

    def next_items(self) -> List[SandboxInfo]:
        """The next page of sandboxes (one request per call, more only to
        skip queries that match nothing)."""
        while self.has_next:
            page = self._client.sandboxes.list(limit=self._limit, offset=self._offset,
                                               **self._plans[self._index])
            out = []
            for sb in page.sandboxes:
                if sb.id not in self._seen:
                    self._seen.add(sb.id)
                    out.append(SandboxInfo._from(sb))
            if page.has_more and page.sandboxes:
                self._offset = page.next_offset
            else:
                self._index += 1
                self._offset = 0
                self.has_next = self._index < len(self._plans)
            if out or not self.has_next:
                return out
        return []

    def __iter__(self) -> Iterator[SandboxInfo]:
        while self.has_next:
            yield from self.next_items()


class _HybridMethod:
    """``Sandbox.kill(id)`` on the class, ``sbx.kill()`` on an instance."""

    def __init__(self, on_instance: Callable[..., Any], on_class: Callable[..., Any]) -> None:
        self._inst = on_instance
        self._cls = on_class
        self.__doc__ = on_instance.__doc__

    def __get__(self, obj: Any, objtype: Any = None) -> Callable[..., Any]:
        if obj is None:
            return functools.partial(self._cls, objtype)
        return functools.partial(self._inst, obj)


class SandboxFiles:
    """``sbx.files``: the files API bound to one sandbox (E2B style)."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sbx = sandbox

    def read(self, path: str, format: str = "text") -> Union[str, bytes]:
        """File content: ``format="text"`` (UTF-8 str) or ``"bytes"``."""
        data = self._sbx._client.files.read(self._sbx.sandbox_id, path)
        if format == "bytes":
            return data
        if format != "text":
            raise invalid('format must be "text" or "bytes"')
        return data.decode("utf-8")

    def write(self, path: str, data: Union[str, bytes]) -> None:
        self._sbx._client.files.write(self._sbx.sandbox_id, path, data)

    def list(self, path: str) -> List[FileInfo]:
        return self._sbx._client.files.list(self._sbx.sandbox_id, path)

    def exists(self, path: str) -> bool:
        return self._sbx._client.files.exists(self._sbx.sandbox_id, path)

    def remove(self, path: str) -> None:
        self._sbx._client.files.delete(self._sbx.sandbox_id, path)

    def make_dir(self, path: str) -> None:
        self._sbx._client.files.mkdir(self._sbx.sandbox_id, path, recursive=True)

    def rename(self, old_path: str, new_path: str) -> None:
        self._sbx._client.files.move(self._sbx.sandbox_id, old_path, new_path)

    def watch(self, path: str, recursive: bool = False) -> FileWatch:
        """A file watch subscribed to ``path`` (``client.files.watch``)."""
        return self._sbx._client.files.watch(self._sbx.sandbox_id, path, recursive)


class SandboxContexts:
    """``sbx.contexts``: process contexts bound to one sandbox."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sbx = sandbox

    def create(self, type: str = "repl", **kwargs: Any) -> Dict[str, Any]:
        """``client.contexts.create`` on this sandbox."""
        return self._sbx._client.contexts.create(self._sbx.sandbox_id, type, **kwargs)

    def stream(self, context_id: str) -> ContextStream:
        """``client.contexts.stream`` on this sandbox::

            with sbx.contexts.stream(ctx["id"]) as s:
                for msg in s: ...
        """
        return self._sbx._client.contexts.stream(self._sbx.sandbox_id, context_id)


class Sandbox:
    """A handle on one sandbox, UCloud/E2B style (see the module doc).

    Handles are cheap: they hold the id and the client; every state comes
    from the API. The id can be stored and reconnected from any process with
    :meth:`connect`.
    """

    def __init__(self, sandbox_id: str, *, client: Optional[Client] = None) -> None:
        self._id = sandbox_id
        self._client = client if client is not None else default_client()
        self.files = SandboxFiles(self)
        self.contexts = SandboxContexts(self)

    @property
    def sandbox_id(self) -> str:
        return self._id

    @property
    def client(self) -> Client:
        return self._client

    def __repr__(self) -> str:
        return f"<libsandbox0.Sandbox {self._id}>"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Sandbox) and other._id == self._id

    def __hash__(self) -> int:
        return hash(self._id)

    # -- creation and connection ----------------------------------------

    @classmethod
    def create(cls, template: Optional[str] = None, timeout: Optional[float] = None,
               lifecycle: Optional[Mapping[str, Any]] = None,
               envs: Optional[Mapping[str, str]] = None, *,
               client: Optional[Client] = None) -> "Sandbox":
        """Create a sandbox and return it Running.

        :param template: template id (default ``"default"``).
        :param timeout: seconds until the timeout action (default 300).
        :param lifecycle: ``{"on_timeout": "kill"|"pause", "auto_resume": bool}``
            (defaults ``"kill"`` and False).
        :param envs: environment of new processes.
        :raises InvalidArgumentError: bad timeout or lifecycle.
        :raises QuotaExceededError, UnavailableError, NotFoundError: from the claim.
        """
        c = client if client is not None else default_client()
        cfg = claim_config(timeout, lifecycle)
        sb = c.sandboxes.claim(template or DEFAULT_TEMPLATE, env_vars=envs, **cfg)
        if sb.status != SandboxStatus.RUNNING:
            c.sandboxes.wait(sb.id, until=SandboxStatus.RUNNING)
        return cls(sb.id, client=c)

    @classmethod
    def connect(cls, sandbox_id: str, timeout: Optional[float] = None, *,
                client: Optional[Client] = None) -> "Sandbox":
        """Connect to a sandbox by id: a paused one is resumed with memory
        (waiting up to 360 s); then its timeout is reset to ``timeout``
        seconds (default 300). A running one only gets its timeout reset.

        :raises NotFoundError: killed or unknown id.
        :raises UnavailableError, ResumeFailedError, SandboxLifecycleFailedError,
            SandboxWaitTimeoutError: the resume failed.
        """
        c = client if client is not None else default_client()
        t = DEFAULT_TIMEOUT_SEC if timeout is None else _seconds(timeout, "timeout")
        sb = c.sandboxes.get(sandbox_id)
        if sb.paused or sb.status in (SandboxStatus.PAUSED, SandboxStatus.FAILED):
            sb = c.sandboxes.resume_and_wait(sandbox_id, memory=True, timeout_sec=MEMORY_WAIT_SEC)
        elif sb.status == SandboxStatus.STARTING:
            sb = c.sandboxes.wait(sandbox_id, until=SandboxStatus.RUNNING) or sb
        _reset_timeout(c, sb, t)
        return cls(sandbox_id, client=c)

    # -- lifecycle ------------------------------------------------------

    def _pause_instance(self) -> str:
        """Pause with memory and wait until paused (up to 360 s); returns the id.

        :raises UnavailableError: memory checkpoints unavailable or
            reservation full (the sandbox keeps running; no fallback).
        :raises SandboxLifecycleFailedError: the memory capture failed.
        :raises SandboxWaitTimeoutError: not paused within 360 s.

        A kill-on-timeout sandbox (the default lifecycle) is not deleted
        while paused: its hard deadline is cleared once paused and
        re-armed by :meth:`connect`.
        """
        _pause(self._client, self._id)
        return self._id

    @staticmethod
    def _pause_class(cls: type, sandbox_id: str, *, client: Optional[Client] = None) -> str:
        c = client if client is not None else default_client()
        _pause(c, sandbox_id)
        return sandbox_id

    pause = _HybridMethod(_pause_instance, _pause_class)

    def _kill_instance(self) -> None:
        """Delete the sandbox permanently (running or paused).

        :raises NotFoundError: already killed.
        """
        self._client.sandboxes.delete(self._id)

    @staticmethod
    def _kill_class(cls: type, sandbox_id: str, *, client: Optional[Client] = None) -> None:
        c = client if client is not None else default_client()
        c.sandboxes.delete(sandbox_id)

    kill = _HybridMethod(_kill_instance, _kill_class)

    def set_timeout(self, timeout: float) -> None:
        """Reset the timeout to ``timeout`` seconds from now (as connect does)."""
        _reset_timeout(self._client, self._client.sandboxes.get(self._id),
                       _seconds(timeout, "timeout"))

    def get_info(self) -> SandboxInfo:
        """The current state. :raises NotFoundError: killed."""
        return SandboxInfo._from(self._client.sandboxes.get(self._id))

    @property
    def state(self) -> SandboxState:
        """Current state; KILLED once the sandbox is gone (404)."""
        try:
            return state_of(self._client.sandboxes.get(self._id))
        except NotFoundError:
            return SandboxState.KILLED

    def is_running(self) -> bool:
        return self.state == SandboxState.RUNNING

    def create_snapshot(self, name: Optional[str] = None,
                        description: Optional[str] = None) -> Snapshot:
        """A named RootFS snapshot (filesystem only). A running sandbox is
        briefly held and stays Running (no wire Snapshotting state)."""
        return self._client.snapshots.create(self._id, name, description)

    @classmethod
    def list(cls, query: Optional[SandboxQuery] = None, limit: int = DEFAULT_PAGE_SIZE, *,
             client: Optional[Client] = None) -> SandboxPaginator:
        """A paginator over the sandboxes matching ``query`` (pages of
        ``limit``, 1..200)."""
        c = client if client is not None else default_client()
        return SandboxPaginator(c, query, limit)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        """Kill on leaving a ``with`` block (E2B behaviour); a sandbox
        already killed is fine."""
        try:
            self.kill()
        except NotFoundError:
            pass
