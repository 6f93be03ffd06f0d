"""The Sandbox0 client: every endpoint, the lifecycle waits, files, snapshots.

Every method is one call into the C library (``libsandbox0.capi``) with the
GIL released, so other Python threads keep running; a :class:`Client` may be
shared by any number of threads. A call made on the main thread is
interrupted by Ctrl-C: the library's cancel token fires and the call raises
:class:`KeyboardInterrupt` promptly (waits sleep on that token). Errors are
raised as the classes of :mod:`libsandbox0.errors`.

Units: durations are seconds (``timeout_sec``, ``ttl``...), sizes bytes,
times aware UTC datetimes.
"""
from __future__ import annotations

import json
import threading
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Mapping,
                    Optional, Sequence, Union)

from . import capi
from ._util import duration_ms, invalid, timeout_ms, to_unix_ms, tri, whole_seconds
from .streams import (KIND_CONTEXT, KIND_FILES_WATCH, KIND_SESSION, ContextStream, FileWatch,
                      SessionStream)
from .models import (FileInfo, LifecycleResult, RefreshResult, Sandbox, SandboxPage,
                     SandboxStatus, Snapshot)

if TYPE_CHECKING:  # pragma: no cover
    from .local import LocalBackend

DEFAULT_BASE_URL: str = capi.DEFAULT_BASE_URL
"""The official API address, ``https://api.sandbox0.ai``."""

#: ``progress(sandbox, elapsed_sec)``: called on the first observation and on
#: every observed change of (status, paused, runtime_generation, runtime_id).
#: Return ``False`` to stop the wait (:class:`~libsandbox0.errors.UserAbortError`);
#: an exception it raises stops the wait and propagates.
ProgressCallback = Callable[[Sandbox, float], Any]
StatusLike = Union[SandboxStatus, str]

capi.set_main_thread(threading.main_thread().ident or 0)


class CancelToken:
    """A cancel token for waits: :meth:`cancel` from any thread makes the
    waits given this token raise :class:`~libsandbox0.errors.CanceledError`
    promptly. The server's accepted operation goes on."""

    def __init__(self) -> None:
        self._native = capi.CCancelToken()

    def cancel(self) -> None:
        """Fire the token (idempotent, any thread)."""
        self._native.cancel()

    @property
    def canceled(self) -> bool:
        return self._native.is_canceled()

    def reset(self) -> None:
        """Re-arm a fired token for reuse."""
        self._native.reset()


def _items(lst: Any) -> Iterator[Any]:
    """The items of a C list (page, snapshot list, file list)."""
    for i in range(lst.length()):
        x = lst.at(i)
        if x is not None:
            yield x


def _status_code(s: StatusLike) -> int:
    code = capi.status_from_name(str(s.value if isinstance(s, SandboxStatus) else s))
    if code == capi.STATUS_UNKNOWN:
        raise invalid(f"unknown sandbox status {s!r}")
    return code


def _mask(statuses: Union[None, StatusLike, Iterable[StatusLike]]) -> int:
    if statuses is None:
        return 0
    if isinstance(statuses, (str, SandboxStatus)):
        statuses = [statuses]
    m = 0
    for s in statuses:
        m |= 1 << _status_code(s)
    return m


def _memory(memory: Optional[bool]) -> int:
    if memory is not None and not isinstance(memory, bool):
        raise invalid("memory must be True, False or None")
    return tri(memory)


def _object(text: str) -> Dict[str, Any]:
    """A JSON object answer of the library as a dict."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object from the library, got {type(value).__name__}")
    return value


def _policy(policy: Any, name: str) -> Dict[str, Any]:
    """A SandboxNetworkPolicy argument as a dict (a JSON object on the wire)."""
    if not isinstance(policy, Mapping):
        raise TypeError(f"{name} must be a mapping (a SandboxNetworkPolicy object), "
                        f"not {type(policy).__name__}")
    return dict(policy)


def _config_args(ttl: Optional[int], hard_ttl: Optional[int], auto_resume: Optional[bool],
                 memory: Optional[str], env_vars: Optional[Mapping[str, str]],
                 config: Optional[Mapping[str, Any]],
                 network: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    set_bits = 0
    if ttl is not None:
        set_bits |= capi.CONFIG_SET_TTL
    if hard_ttl is not None:
        set_bits |= capi.CONFIG_SET_HARD_TTL
    envs = None
    if env_vars is not None:
        envs = []
        for k, v in env_vars.items():
            if not isinstance(k, str) or not k or "=" in k:
                raise invalid(f"bad environment variable name {k!r}")
            envs.append(f"{k}={v}")
    if network is not None:
        config = dict(config or {})
        config["network"] = _policy(network, "network")
    return dict(set=set_bits, ttl_sec=whole_seconds(ttl, "ttl"),
                hard_ttl_sec=whole_seconds(hard_ttl, "hard_ttl"),
                auto_resume=tri(auto_resume), memory=memory, env_vars=envs,
                extra_json=json.dumps(dict(config)) if config else None)


def _wait_args(timeout_sec: Optional[float], poll_interval_sec: Optional[float],
               poll_initial_sec: Optional[float], poll_max_sec: Optional[float],
               jitter: bool, progress: Optional[ProgressCallback],
               cancel: Optional[CancelToken]) -> Dict[str, Any]:
    if poll_interval_sec is not None:
        poll_initial_sec = poll_max_sec = poll_interval_sec
    flags = 0 if jitter else capi.WAIT_NO_JITTER
    cb = None
    if progress is not None:
        if not callable(progress):
            raise invalid("progress must be callable")

        def cb(info: "capi.CSandboxInfo", elapsed_ms: int,
               _p: ProgressCallback = progress) -> Any:
            return _p(Sandbox._from_native(info), elapsed_ms / 1000.0)

    if cancel is not None and not isinstance(cancel, CancelToken):
        raise invalid("cancel must be a libsandbox0.CancelToken")
    return dict(timeout_ms=timeout_ms(timeout_sec),
                poll_initial_ms=duration_ms(poll_initial_sec, "poll_initial_sec"),
                poll_max_ms=duration_ms(poll_max_sec, "poll_max_sec"), flags=flags,
                progress=cb, cancel=cancel._native if cancel is not None else None)


class Sandboxes:
    """Sandbox lifecycle endpoints (``client.sandboxes``)."""

    def __init__(self, client: "Client") -> None:
        self._client = client

    @property
    def _n(self) -> "capi.CClient":
        return self._client._native

    def claim(self, template: str = "default", *, snapshot_id: Optional[str] = None,
              ttl: Optional[int] = None, hard_ttl: Optional[int] = None,
              auto_resume: Optional[bool] = None, memory: Optional[str] = None,
              env_vars: Optional[Mapping[str, str]] = None,
              network: Optional[Mapping[str, Any]] = None,
              config: Optional[Mapping[str, Any]] = None) -> Sandbox:
        """Claim a new sandbox: ``POST /api/v1/sandboxes`` (one request, no retry).

        :param template: template id (``"default"`` exists on every backend).
        :param snapshot_id: initialise the RootFS from this snapshot.
        :param ttl: soft TTL in seconds (expiry pauses); 0 disables; None = not sent.
        :param hard_ttl: hard TTL in seconds (expiry deletes); 0 disables.
        :param auto_resume: may inbound access wake it when paused (server default True).
        :param memory: ``resources.memory``, e.g. ``"512Mi"``.
        :param env_vars: default environment of new processes.
        :param network: ``config.network``, a SandboxNetworkPolicy mapping
            (``{"mode": "allow-all"|"block-all", "egress": {...}}``), applied
            to the runtime before it is reported running; see
            :meth:`update_network_policy`.
        :param config: extra raw ``SandboxConfig`` fields (services, webhook,
            lifecycle...); the typed arguments win.
        :returns: the claim response as a :class:`Sandbox` (id, status, template, runtime_id).
        :raises InvalidArgumentError: bad config (400, e.g. a bad ``network.mode``) or arguments.
        :raises TypeError: ``network`` is not a mapping (no request sent).
        :raises NotFoundError: unknown template or snapshot.
        :raises ConflictError: template not ready (``retry_after`` set).
        :raises QuotaExceededError, ThrottledError, UnavailableError: nothing was created.
        """
        return Sandbox._from_native(self._n.claim(
            template, snapshot_id=snapshot_id,
            **_config_args(ttl, hard_ttl, auto_resume, memory, env_vars, config, network)))

    create = claim

    def get(self, sandbox_id: str) -> Sandbox:
        """Read a sandbox: ``GET /api/v1/sandboxes/{id}``.

        :raises NotFoundError: unknown, deleted, hard-expired or another team's.
        """
        return Sandbox._from_native(self._n.get(sandbox_id))

    def status(self, sandbox_id: str) -> Sandbox:
        """The short status (``GET …/status``): id, template, team, status and
        timestamps (``paused`` and the generation are not part of it).

        :raises NotFoundError: unknown id.
        """
        return Sandbox._from_native(self._n.status(sandbox_id))

    def list(self, *, status: Optional[StatusLike] = None, paused: Optional[bool] = None,
             template_id: Optional[str] = None, limit: Optional[int] = None,
             offset: int = 0) -> SandboxPage:
        """One page of ``GET /api/v1/sandboxes``, newest first.

        :param status: only this status.
        :param paused: only paused (True) or not paused (False) sandboxes.
        :param template_id: exact template filter.
        :param limit: page size 1..200 (None = 50).
        :param offset: first item, >= 0.
        :raises InvalidArgumentError: limit or offset out of range (no request sent).
        """
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or not 1 <= limit <= 200):
            raise invalid("limit must be between 1 and 200")
        lim = limit or 0
        page = self._n.list(status=_status_code(status) if status is not None else 0,
                            paused=tri(paused), template_id=template_id, limit=lim,
                            offset=offset)
        items = [Sandbox._from_native(x) for x in _items(page)]
        return SandboxPage(items, page.count(), page.has_more(), offset, lim or 50)

    def pages(self, *, status: Optional[StatusLike] = None, paused: Optional[bool] = None,
              template_id: Optional[str] = None, page_size: Optional[int] = None,
              offset: int = 0) -> Iterator[SandboxPage]:
        """Every page of a list, one request per page (the next offset is the
        previous offset plus the page length), until ``has_more`` is false."""
        while True:
            page = self.list(status=status, paused=paused, template_id=template_id,
                             limit=page_size, offset=offset)
            yield page
            if not page.has_more or not page.sandboxes:
                return
            offset = page.next_offset

    def iter(self, *, status: Optional[StatusLike] = None, paused: Optional[bool] = None,
             template_id: Optional[str] = None, page_size: Optional[int] = None,
             offset: int = 0) -> Iterator[Sandbox]:
        """Every match, fetching pages of ``page_size`` lazily (C iterator).
        Not for sharing between threads."""
        it = self._n.iter(status=_status_code(status) if status is not None else 0,
                          paused=tri(paused), template_id=template_id,
                          limit=page_size or 0, offset=offset)
        while True:
            info = it.next_info()
            if info is None:
                return
            yield Sandbox._from_native(info)

    def update(self, sandbox_id: str, *, ttl: Optional[int] = None,
               hard_ttl: Optional[int] = None, auto_resume: Optional[bool] = None,
               memory: Optional[str] = None, env_vars: Optional[Mapping[str, str]] = None,
               network: Optional[Mapping[str, Any]] = None,
               config: Optional[Mapping[str, Any]] = None) -> Sandbox:
        """Change the durable configuration: ``PUT /api/v1/sandboxes/{id}``.
        A given ``ttl`` re-arms ``expires_at = now + ttl`` (0 disables); the
        same for ``hard_ttl``. Arguments left None are not sent.

        :param network: replace ``config.network`` (a SandboxNetworkPolicy
            mapping), as :meth:`update_network_policy` does.
        :raises InvalidArgumentError: e.g. ttl > hard_ttl or a bad network
            policy (400); unchanged.
        :raises TypeError: ``network`` is not a mapping (no request sent).
        :raises NotFoundError: unknown id.
        """
        return Sandbox._from_native(self._n.update(
            sandbox_id,
            **_config_args(ttl, hard_ttl, auto_resume, memory, env_vars, config, network)))

    def get_network_policy(self, sandbox_id: str) -> Dict[str, Any]:
        """The sandbox's network policy: ``GET /api/v1/sandboxes/{id}/network``.

        :returns: the SandboxNetworkPolicy as a dict (``config.network`` as
            stored, or ``{"mode": "allow-all"}`` when none was set).
        :raises NotFoundError: unknown, deleted or another team's sandbox.
        """
        return _object(self._n.get_network_policy(sandbox_id))

    def update_network_policy(self, sandbox_id: str,
                              policy: Mapping[str, Any]) -> Dict[str, Any]:
        """Replace the network policy: ``PUT /api/v1/sandboxes/{id}/network``.

        ``policy`` is a SandboxNetworkPolicy: ``{"mode": "allow-all" |
        "block-all", "egress": {"allowedDomains": [...], "allowedCidrs":
        [...], "allowedPorts": [{"port": 443}], "deniedDomains": [...],
        "deniedCidrs": [...], "deniedPorts": [...], "trafficRules": [...]}}``.
        It is stored as ``config.network``: a running sandbox's runtime
        applies it at once, a paused one when it resumes (every new runtime
        generation gets it before it is reported running).

        :returns: the stored policy as a dict.
        :raises InvalidArgumentError: 400 ``bad_request`` (bad mode, CIDR,
            domain, port...; the message names the field, e.g.
            ``network.mode``); the old policy stays.
        :raises TypeError: ``policy`` is not a mapping (no request sent).
        :raises NotFoundError: unknown, deleted or another team's sandbox.
        """
        body = json.dumps(_policy(policy, "policy"))
        return _object(self._n.update_network_policy(sandbox_id, body))

    def delete(self, sandbox_id: str) -> None:
        """Delete: identity, configuration and writable RootFS (named snapshots stay).

        :raises NotFoundError: unknown or already deleted.
        """
        self._n.delete(sandbox_id)

    def pause(self, sandbox_id: str, *, memory: Optional[bool] = None) -> LifecycleResult:
        """Request a pause: ``POST …/pause``; returns once accepted (200 or 202).

        :param memory: None sends no body (filesystem-only); True/False send
            ``{"memory": true|false}``.
        :raises ConflictError: starting, failed or terminating; nothing changed.
        :raises UnavailableError: memory checkpoints unsupported or reservation
            full; the sandbox keeps running.
        :raises NotFoundError: unknown id.
        """
        return LifecycleResult._from_native(self._n.pause(sandbox_id, memory=_memory(memory)))

    def resume(self, sandbox_id: str, *, memory: Optional[bool] = None) -> LifecycleResult:
        """Request a resume: ``POST …/resume``. ``resumed`` false means the
        durable work goes on; poll, or use :meth:`resume_and_wait`.

        :raises UnavailableError: no carrier/capacity/object store; stays paused.
        :raises ConflictError: terminating. :raises NotFoundError: unknown id.
        """
        return LifecycleResult._from_native(self._n.resume(sandbox_id, memory=_memory(memory)))

    def refresh(self, sandbox_id: str, duration: Optional[int] = None) -> RefreshResult:
        """Re-arm the soft TTL: ``POST …/refresh``.

        :param duration: seconds; ``expires_at = now + duration``. None sends
            ``{}`` (now + the configured ttl). ``hard_expires_at`` is re-armed
            too when a hard TTL is configured.
        :raises ConflictError: the sandbox is paused. :raises NotFoundError: unknown id.
        """
        return RefreshResult._from_native(
            self._n.refresh(sandbox_id, duration_sec=whole_seconds(duration, "duration")))

    def pause_and_wait(self, sandbox_id: str, memory: Optional[bool] = None,
                       timeout_sec: Optional[float] = None, *,
                       poll_interval_sec: Optional[float] = None,
                       poll_initial_sec: Optional[float] = None,
                       poll_max_sec: Optional[float] = None, jitter: bool = True,
                       progress: Optional[ProgressCallback] = None,
                       cancel: Optional[CancelToken] = None) -> Sandbox:
        """Pause and wait for ``status == paused and paused``.

        Sends exactly one pause request (repeated with the same body only
        when its outcome is unknown) and polls at once, then with backoff
        (0.1 s growing to 0.5 s with jitter; ``poll_interval_sec`` fixes it).
        Never retries a memory pause without memory.

        :param memory: True sends ``{"memory": true}``: a ``failed``
            observation raises :class:`SandboxLifecycleFailedError` (action
            ``"memory pause"``). None: filesystem-only, no body.
        :param timeout_sec: deadline for the whole call; None = 60 s (360 s
            with memory); ``math.inf`` = none.
        :param progress: ``progress(sandbox, elapsed_sec)`` on every observed change.
        :param cancel: a :class:`CancelToken` another thread may fire.
        :returns: the paused sandbox.
        :raises SandboxWaitTimeoutError: deadline (``last_sandbox`` set); the pause goes on.
        :raises SandboxLifecycleFailedError: reason ``pause_superseded``: the runtime
            generation the pause retires was replaced without it (a crash recovery
            restarted the sandbox from its last committed head, or it was resumed);
            ``last_sandbox`` is the sandbox now; pause again to checkpoint it.
        :raises UnavailableError: e.g. memory checkpoints unavailable (503); nothing accepted.
        :raises ConflictError, NotFoundError: from the request.
        :raises CanceledError: ``cancel`` fired. KeyboardInterrupt on Ctrl-C.
        """
        return Sandbox._from_native(self._n.pause_and_wait(
            sandbox_id, memory=_memory(memory),
            **_wait_args(timeout_sec, poll_interval_sec, poll_initial_sec, poll_max_sec, jitter,
                         progress, cancel)))

    def resume_and_wait(self, sandbox_id: str, memory: Optional[bool] = None,
                        timeout_sec: Optional[float] = None, *,
                        poll_interval_sec: Optional[float] = None,
                        poll_initial_sec: Optional[float] = None,
                        poll_max_sec: Optional[float] = None, jitter: bool = True,
                        progress: Optional[ProgressCallback] = None,
                        cancel: Optional[CancelToken] = None) -> Sandbox:
        """Resume and wait for the new runtime generation to be running.

        Reads the sandbox first: a paused sandbox must reach generation + 1,
        a running one succeeds at once. One resume request; ``resumed:
        false``, ``starting`` and "sandbox is waking up" mean keep polling.

        :param memory: True sends ``{"memory": true}`` (prefer a retained
            checkpoint; otherwise a filesystem resume); a ``failed`` at the
            new generation raises :class:`SandboxLifecycleFailedError`.
        :param timeout_sec: None = 60 s (360 s with memory); ``math.inf`` = none.
        :returns: the running sandbox.
        :raises SandboxWaitTimeoutError: deadline; the resume goes on.
        :raises UnavailableError: no carrier/capacity...: still paused, head unchanged.
        :raises ResumeFailedError: 503 ``sandbox_resume_failed``.
        :raises NotFoundError: unknown id (no resume sent) or deleted meanwhile.
        :raises CanceledError: ``cancel`` fired. KeyboardInterrupt on Ctrl-C.
        """
        return Sandbox._from_native(self._n.resume_and_wait(
            sandbox_id, memory=_memory(memory),
            **_wait_args(timeout_sec, poll_interval_sec, poll_initial_sec, poll_max_sec, jitter,
                         progress, cancel)))

    def wait(self, sandbox_id: str, *,
             until: Union[None, StatusLike, Iterable[StatusLike]] = None,
             fail: Union[None, StatusLike, Iterable[StatusLike]] = None,
             predicate: Optional[Callable[[Sandbox], bool]] = None,
             timeout_sec: Optional[float] = None, not_found_ok: bool = False,
             poll_interval_sec: Optional[float] = None,
             poll_initial_sec: Optional[float] = None, poll_max_sec: Optional[float] = None,
             jitter: bool = True, progress: Optional[ProgressCallback] = None,
             cancel: Optional[CancelToken] = None) -> Optional[Sandbox]:
        """Poll ``GET /sandboxes/{id}`` until its status is in ``until`` (and
        ``predicate(sandbox)`` is true when given); no lifecycle request.

        :param fail: statuses that end the wait with
            :class:`SandboxLifecycleFailedError` (``last_sandbox`` set).
        :param not_found_ok: a 404 ends the wait and returns None (deletion waits).
        :param timeout_sec: None = 60 s; ``math.inf`` = none.
        :raises SandboxWaitTimeoutError, NotFoundError, CanceledError.
        """
        pred = None
        if predicate is not None:
            def pred(info: "capi.CSandboxInfo",
                     _p: Callable[[Sandbox], bool] = predicate) -> Any:
                return _p(Sandbox._from_native(info))
        args = _wait_args(timeout_sec, poll_interval_sec, poll_initial_sec, poll_max_sec,
                          jitter, progress, cancel)
        if not_found_ok:
            args["flags"] |= capi.WAIT_NOTFOUND_OK
        info = self._n.wait(sandbox_id, until_mask=_mask(until), fail_mask=_mask(fail),
                            predicate=pred, **args)
        return Sandbox._from_native(info) if info is not None else None

    def fork(self, sandbox_id: str, *, ttl: Optional[int] = None, hard_ttl: Optional[int] = None,
             memory: bool = False, idempotency_key: Optional[str] = None) -> Sandbox:
        """Fork a running or paused sandbox into a new **paused** sandbox.

        :param ttl, hard_ttl: the child's TTLs in seconds (None = inherit).
        :param memory: memory fork (needs ``idempotency_key``).
        :raises InvalidArgumentError: memory fork without a valid key (no request).
        :raises UnavailableError: memory capture pending: repeat with the same key.
        """
        set_bits = (capi.CONFIG_SET_TTL if ttl is not None else 0) | \
                   (capi.CONFIG_SET_HARD_TTL if hard_ttl is not None else 0)
        return Sandbox._from_native(self._n.fork(
            sandbox_id, set=set_bits, ttl_sec=whole_seconds(ttl, "ttl"),
            hard_ttl_sec=whole_seconds(hard_ttl, "hard_ttl"), memory=1 if memory else 0,
            idempotency_key=idempotency_key))

    def restore(self, sandbox_id: str, snapshot_id: str) -> LifecycleResult:
        """Move a paused sandbox's RootFS head to a snapshot; it stays paused.

        :raises ConflictError: not paused (reason ``not_paused``).
        :raises NotFoundError: unknown sandbox or snapshot.
        """
        return LifecycleResult._from_native(self._n.restore(sandbox_id, snapshot_id))

    def create_snapshot(self, sandbox_id: str, name: Optional[str] = None,
                        description: Optional[str] = None, expires_at: Any = None) -> Snapshot:
        """Same as ``client.snapshots.create``."""
        return self._client.snapshots.create(sandbox_id, name, description, expires_at)

    def list_snapshots(self, sandbox_id: str) -> List[Snapshot]:
        """Same as ``client.snapshots.list``."""
        return self._client.snapshots.list(sandbox_id)


class Snapshots:
    """Named RootFS snapshots (``client.snapshots``)."""

    def __init__(self, client: "Client") -> None:
        self._client = client

    def create(self, sandbox_id: str, name: Optional[str] = None,
               description: Optional[str] = None, expires_at: Any = None) -> Snapshot:
        """Snapshot a running (briefly barriered, stays running) or paused sandbox.

        :param expires_at: datetime or epoch seconds in the future; None = never.
        :raises InvalidArgumentError: expiry in the past. :raises ConflictError: busy.
        """
        return Snapshot._from_native(self._client._native.snapshot_create(
            sandbox_id, name=name, description=description,
            expires_at_unix_ms=to_unix_ms(expires_at, "expires_at")))

    def list(self, sandbox_id: str) -> List[Snapshot]:
        """A sandbox's snapshots, newest first. :raises NotFoundError: unknown id."""
        lst = self._client._native.snapshot_list(sandbox_id)
        return [Snapshot._from_native(x) for x in _items(lst)]

    def get(self, snapshot_id: str) -> Snapshot:
        """:raises NotFoundError: unknown or expired."""
        return Snapshot._from_native(self._client._native.snapshot_get(snapshot_id))

    def delete(self, snapshot_id: str) -> None:
        """Delete a snapshot (sandboxes made from it are unaffected)."""
        self._client._native.snapshot_delete(snapshot_id)


class Files:
    """The sandbox files API (``client.files``). Paths are absolute or
    relative to ``/workspace``. A request to a paused sandbox with
    ``auto_resume`` wakes it; with ``auto_resume`` off it raises
    :class:`UnavailableError` (reason ``auto_resume_disabled``)."""

    def __init__(self, client: "Client") -> None:
        self._client = client

    def read(self, sandbox_id: str, path: str) -> bytes:
        """Whole file as bytes. :raises NotFoundError: ``file_not_found``.
        :raises ConflictError: ``path_not_file``."""
        data = self._client._native.files_read(sandbox_id, path)
        return data if data is not None else b""

    def read_text(self, sandbox_id: str, path: str, encoding: str = "utf-8") -> str:
        return self.read(sandbox_id, path).decode(encoding)

    def write(self, sandbox_id: str, path: str, data: Union[bytes, bytearray, memoryview, str],
              encoding: str = "utf-8") -> None:
        """Write a whole file atomically (parents created, mode 0644; str is
        encoded). :raises TooLargeError: over 100 MiB; nothing written."""
        if isinstance(data, str):
            data = data.encode(encoding)
        self._client._native.files_write(sandbox_id, path, data)

    def mkdir(self, sandbox_id: str, path: str, recursive: bool = False) -> None:
        """:raises ConflictError: ``path_exists`` when not recursive and it exists."""
        self._client._native.files_mkdir(sandbox_id, path, recursive=1 if recursive else 0)

    def delete(self, sandbox_id: str, path: str) -> None:
        """Delete a file or a tree; a missing path succeeds."""
        self._client._native.files_delete(sandbox_id, path)

    def stat(self, sandbox_id: str, path: str) -> FileInfo:
        """lstat. :raises NotFoundError: ``file_not_found``."""
        return FileInfo._from_native(self._client._native.files_stat(sandbox_id, path))

    def list(self, sandbox_id: str, path: str) -> List[FileInfo]:
        """Directory entries. :raises NotFoundError: ``directory_not_found``."""
        lst = self._client._native.files_list(sandbox_id, path)
        return [FileInfo._from_native(x) for x in _items(lst)]

    def move(self, sandbox_id: str, source: str, destination: str) -> None:
        """Move/rename; destination parents are created."""
        self._client._native.files_move(sandbox_id, source, destination)

    def watch(self, sandbox_id: str, path: Optional[str] = None,
              recursive: bool = False) -> FileWatch:
        """Open a file watch (``GET …/files/watch``; the official SDKs'
        ``WatchFiles``) and, with ``path``, subscribe to it; iterate it for
        ``{"type":"event","event":"create"|"write"|"remove"|…,"path"}``
        messages (see :class:`~libsandbox0.streams.FileWatch`). A pause ends
        it (close code 1001); opening wakes a paused ``auto_resume`` sandbox.

        :raises NotFoundError: ``sandbox_not_found``.
        :raises Sandbox0Error: ``watch_refused``, the subscription was refused.
        """
        w = FileWatch(self._client._native.stream_open(KIND_FILES_WATCH, sandbox_id))
        if path is not None:
            try:
                w.subscribe(path, recursive)
            except BaseException:
                w.close()
                raise
        return w

    def exists(self, sandbox_id: str, path: str) -> bool:
        from .errors import NotFoundError

        try:
            self.stat(sandbox_id, path)
            return True
        except NotFoundError:
            return False


class Contexts:
    """Process contexts (``client.contexts``, docs/wire.md §8.1): a ``repl`` (a
    stateful shell whose variables, working directory and background jobs
    live in process memory) or a ``cmd`` (one argv). Results are the
    ``data`` objects of the API as plain dicts (ContextResponse,
    ContextExecResponse).

    What survives a pause: a **memory** pause (``pause_and_wait(...,
    memory=True)``) retains the context's process, so after a memory resume
    its variables and background jobs (same PIDs) are still there; a
    filesystem-only pause ends it (``context_not_found`` afterwards).

    Like the files API these are runtime requests: a paused sandbox with
    ``auto_resume`` is woken first (restoring retained memory when it has
    some); without ``auto_resume`` they raise :class:`UnavailableError`
    (reason ``auto_resume_disabled``).

    ::

        ctx = client.contexts.create(sandbox_id)              # a REPL
        client.contexts.exec(sandbox_id, ctx["id"], "GREETING=hello")
        client.contexts.exec(sandbox_id, ctx["id"], "echo $GREETING")["stdout"]  # 'hello\\n'
    """

    def __init__(self, client: "Client") -> None:
        self._client = client

    def create(self, sandbox_id: str, type: str = "repl", *,
               command: Optional[Sequence[str]] = None, cwd: Optional[str] = None,
               env_vars: Optional[Mapping[str, str]] = None,
               wait_until_done: Optional[bool] = None,
               **fields: Any) -> Dict[str, Any]:
        """Create a context (``POST …/contexts``) and return its ContextResponse
        (``id``, ``type``, ``running``, ``cwd``, ``env_vars``…).

        :param type: ``"repl"`` (default) or ``"cmd"``.
        :param command: argv of a ``cmd`` context (implies ``type="cmd"``).
        :param cwd: working directory. :param env_vars: exported variables.
        :param wait_until_done: a ``cmd`` context: answer once it has exited
            (its output and ``exit_code`` are in the response).
        :param fields: any other CreateContextRequest member (``repl``,
            ``pty_size``, ``idle_timeout_sec``, ``ttl_sec``), passed as is.
        :raises InvalidArgumentError: ``invalid_request``.
        """
        body: Dict[str, Any] = dict(fields)
        if command is not None:
            if isinstance(command, (str, bytes)):
                raise TypeError("command must be a sequence of strings (an argv)")
            type = "cmd"
            body["cmd"] = {"command": list(command)}
        body["type"] = type
        if cwd is not None:
            body["cwd"] = cwd
        if env_vars is not None:
            body["env_vars"] = dict(env_vars)
        if wait_until_done is not None:
            body["wait_until_done"] = bool(wait_until_done)
        return _object(self._client._native.context_create(sandbox_id, json.dumps(body)))

    def exec(self, sandbox_id: str, context_id: str, input: str) -> Dict[str, Any]:
        """Run ``input`` in a context and wait for its result (a REPL gets a
        newline appended when it lacks one); returns the ContextExecResponse
        (``output_raw``, ``stdout``, ``stderr``; ``exit_code`` and ``state``
        once the process has exited).

        :raises NotFoundError: ``context_not_found``.
        :raises RequestTimeoutError: ``exec_timeout``.
        :raises GoneError: ``process_finished``.
        """
        return _object(self._client._native.context_exec(sandbox_id, context_id, input))

    def get(self, sandbox_id: str, context_id: str) -> Dict[str, Any]:
        """The ContextResponse of a context. :raises NotFoundError: ``context_not_found``."""
        return _object(self._client._native.context_get(sandbox_id, context_id))

    def delete(self, sandbox_id: str, context_id: str) -> None:
        """Delete a context and kill its process. :raises NotFoundError: ``context_not_found``."""
        self._client._native.context_delete(sandbox_id, context_id)

    def stream(self, sandbox_id: str, context_id: str) -> ContextStream:
        """Open a context's stream (``GET …/contexts/{id}/ws``; the official
        SDKs' ``connectWsContext``): its output by source in order, ``done``
        per input, a terminal ``done``; send input, signals and resizes
        (see :class:`~libsandbox0.streams.ContextStream`)::

            with client.contexts.stream(sandbox_id, ctx["id"]) as s:
                s.send_input("echo hi\\n", request_id="r1")
                for msg in s: ...

        :raises NotFoundError: ``sandbox_not_found``, ``context_not_found``.
        :raises UnavailableError: ``auto_resume_disabled`` on a paused sandbox.
        """
        return ContextStream(self._client._native.stream_open(
            KIND_CONTEXT, sandbox_id, context_id))

    def call(self, method: str, sandbox_id: str, suffix: str,
             body: Optional[Mapping[str, Any]] = None, *,
             idempotency_key: Optional[str] = None) -> Any:
        """Any endpoint of the process family (``<method>
        /api/v1/sandboxes/{id}<suffix>``, suffix starting with ``/contexts``
        or ``/sessions``, already escaped); returns the decoded ``data``
        member (None when absent)."""
        data = self._client._native.runtime_call(
            method, sandbox_id, suffix,
            body_json=None if body is None else json.dumps(dict(body)),
            idempotency_key=idempotency_key)
        return json.loads(data) if data else None


class Sessions:
    """Supervised sessions (``client.sessions``, docs/wire.md §8): a command
    whose events (output, exit, restarts) are kept with a ``seq`` cursor."""

    def __init__(self, client: "Client") -> None:
        self._client = client

    def create(self, sandbox_id: str, command: Sequence[str], **fields: Any) -> Dict[str, Any]:
        """Start a session (``POST …/sessions``) and return it (``id``…);
        ``fields`` are other members of the request, passed as is."""
        if isinstance(command, (str, bytes)):
            raise TypeError("command must be a sequence of strings (an argv)")
        body = dict(fields)
        body["command"] = list(command)
        return self._client.contexts.call("POST", sandbox_id, "/sessions", body)

    def attach(self, sandbox_id: str, session_id: str, *, after: int = 0) -> SessionStream:
        """Attach to a session (``GET …/sessions/{id}/ws?after=``): its events
        with ``seq`` greater than ``after`` (0: from the start), then live
        ones (see :class:`~libsandbox0.streams.SessionStream`).

        :raises NotFoundError: ``session_not_found``.
        :raises GoneError: ``event_cursor_expired``.
        :raises InvalidArgumentError: ``after`` < 0.
        """
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise invalid("after must be an int >= 0 (a seq)")
        return SessionStream(self._client._native.stream_open(
            KIND_SESSION, sandbox_id, session_id, after=after))


class Client:
    """A client of one Sandbox0 API.

    ``Client(token=..., base_url=...)`` talks HTTP(S) (libcurl);
    :meth:`LocalBackend.client` gives one over an embedded backend with the
    same behaviour. Thread-safe; close it (or use ``with``) to free it.

    :param token: bearer token (API key ``s0_…`` or JWT); None/blank sends none.
    :param base_url: API base URL, may carry a path prefix.
    :param timeout: whole-request timeout in seconds for each HTTP exchange;
        None = the library default (120 s, longer than the 45 s wake budget);
        ``math.inf`` = none.
    :param user_agent: User-Agent header (default ``libsandbox0/<version>``).
    :param headers: extra headers (mapping or ``"Name: value"`` strings).
    :param verify_ssl: False disables TLS verification (testing only).
    :param team_id: ``X-Team-ID`` team selector.
    :param connect_timeout: connect timeout in seconds (default 10).
    :param ca_file: CA bundle path. :param proxy: proxy URL ("" = none).
    :raises InvalidArgumentError: a malformed base URL, header or timeout.
    """

    def __init__(self, token: Optional[str] = None, base_url: str = DEFAULT_BASE_URL,
                 timeout: Optional[float] = None, user_agent: Optional[str] = None,
                 headers: Union[None, Mapping[str, str], Sequence[str]] = None,
                 verify_ssl: bool = True, *, team_id: Optional[str] = None,
                 connect_timeout: Optional[float] = None, ca_file: Optional[str] = None,
                 proxy: Optional[str] = None, _from_env: bool = False,
                 _native: Optional["capi.CClient"] = None,
                 _backend: Optional["LocalBackend"] = None) -> None:
        if _native is None:
            hdrs: Optional[List[str]] = None
            if headers is not None:
                if isinstance(headers, (str, bytes)):
                    raise TypeError("headers must be a mapping or a list of 'Name: value' strings")
                if isinstance(headers, Mapping):
                    hdrs = [f"{k}: {v}" for k, v in headers.items()]
                else:
                    hdrs = list(headers)
            _native = capi.client_new(
                base_url=base_url, token=token, user_agent=user_agent, team_id=team_id,
                headers=hdrs, connect_timeout_ms=timeout_ms(connect_timeout, "connect_timeout"),
                request_timeout_ms=timeout_ms(timeout, "timeout"),
                insecure_skip_verify=0 if verify_ssl else 1, ca_file=ca_file, proxy=proxy,
                from_env=1 if _from_env else 0)
        self._native = _native
        self._backend = _backend  # keeps an embedded backend alive
        self.sandboxes = Sandboxes(self)
        self.snapshots = Snapshots(self)
        self.files = Files(self)
        self.contexts = Contexts(self)
        self.sessions = Sessions(self)

    @classmethod
    def from_env(cls, *, token: Optional[str] = None, base_url: Optional[str] = None,
                 **kwargs: Any) -> "Client":
        """A client configured like the official SDK adapters:
        ``SANDBOX0_BASE_URL`` (default the official API), then
        ``SANDBOX0_TOKEN``, else ``SANDBOX0_API_KEY``. Arguments given win."""
        return cls(token=token, base_url=base_url, _from_env=True, **kwargs)  # type: ignore[arg-type]

    @property
    def base_url(self) -> str:
        """Normalised base URL (``local:<dir>`` for an embedded backend)."""
        return self._native.base_url() or ""

    @property
    def closed(self) -> bool:
        return self._native.closed()

    def close(self) -> None:
        """Cancel calls in flight, wait for them, free the C client. Idempotent."""
        self._native.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<libsandbox0.Client {self.base_url or '(closed)'}>"

    # Official-SDK style shortcuts.
    def get_sandbox(self, sandbox_id: str) -> Sandbox:
        """``client.sandboxes.get``: exposes ``.paused``, ``.status``,
        ``.runtime_id`` and ``.runtime_generation``."""
        return self.sandboxes.get(sandbox_id)

    def claim_sandbox(self, template: str = "default", **kwargs: Any) -> Sandbox:
        return self.sandboxes.claim(template, **kwargs)

    def list_sandboxes(self, **kwargs: Any) -> List[Sandbox]:
        return self.sandboxes.list(**kwargs).sandboxes

    def update_sandbox(self, sandbox_id: str, **kwargs: Any) -> Sandbox:
        return self.sandboxes.update(sandbox_id, **kwargs)

    def delete_sandbox(self, sandbox_id: str) -> None:
        self.sandboxes.delete(sandbox_id)

    def pause_sandbox(self, sandbox_id: str, **kwargs: Any) -> LifecycleResult:
        return self.sandboxes.pause(sandbox_id, **kwargs)

    def resume_sandbox(self, sandbox_id: str, **kwargs: Any) -> LifecycleResult:
        return self.sandboxes.resume(sandbox_id, **kwargs)

    def refresh_sandbox(self, sandbox_id: str, duration: Optional[int] = None) -> RefreshResult:
        return self.sandboxes.refresh(sandbox_id, duration)
