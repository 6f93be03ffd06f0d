"""libsandbox0 — Python SDK over the libsandbox0 C library.

A Sandbox0 client (pause/resume with filesystem-only and memory modes, the
lifecycle waits, snapshots, fork, restore, files, process contexts) plus an embeddable local
reference backend, and a UCloud/E2B-style facade::

    from libsandbox0 import Client

    client = Client(base_url="https://api.sandbox0.ai", token="s0_...")
    client.sandboxes.pause_and_wait(sandbox_id, memory=True, timeout_sec=360)
    client.sandboxes.resume_and_wait(sandbox_id, memory=True, timeout_sec=360)
    sb = client.get_sandbox(sandbox_id)
    print(sb.paused, sb.status, sb.runtime_id, sb.runtime_generation)

Offline::

    from libsandbox0 import LocalBackend

    with LocalBackend("/tmp/s0-data") as backend:
        client = backend.client()

The import name is ``libsandbox0`` so that it never clashes with the official
``sandbox0`` package. ``libsandbox0.capi`` is the low-level SWIG module.
"""
from __future__ import annotations

from . import capi
from .client import (DEFAULT_BASE_URL, CancelToken, Client, Contexts, Files, Sandboxes,
                     Sessions, Snapshots)
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _errors_all
from .facade import (Sandbox, SandboxInfo, SandboxPaginator, SandboxQuery, SandboxState,
                     default_client, set_default_client)
from .local import LocalBackend, LocalServer
from .streams import ContextStream, FileWatch, SessionStream, Stream
from .models import (FileInfo, FileType, LifecycleResult, PauseResult, RefreshResult,
                     RestoreResult, ResumeResult, SandboxPage, SandboxStatus, Snapshot)
from .models import Sandbox as SandboxDetails

__version__: str = capi.version_string()


def live_objects() -> int:
    """Number of C library objects alive in this process (leak checks)."""
    return capi.live_objects()


__all__ = [
    "Client", "Sandboxes", "Snapshots", "Files", "Contexts", "Sessions", "CancelToken",
    "DEFAULT_BASE_URL", "LocalBackend", "LocalServer", "Stream", "ContextStream", "SessionStream",
    "FileWatch", "SandboxDetails", "SandboxStatus", "LifecycleResult", "PauseResult",
    "ResumeResult", "RestoreResult", "RefreshResult", "SandboxPage", "Snapshot", "FileInfo",
    "FileType", "Sandbox", "SandboxInfo", "SandboxQuery", "SandboxState", "SandboxPaginator",
    "default_client", "set_default_client", "live_objects", "capi", "__version__",
] + list(_errors_all)
