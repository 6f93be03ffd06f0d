"""Result objects: immutable Python snapshots of the C library's results.

Every value is copied out of the C object when the result is built, so
results are plain Python data, safe to share between threads and to keep
after the client is closed. Times are aware UTC datetimes (None when unset).
"""
from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Iterator, List, Optional

from . import capi
from ._util import from_unix_ms


class SandboxStatus(str, enum.Enum):
    """The wire's ``SandboxLifecycleStatus`` (docs/wire.md §3.11). ``paused`` is a
    separate boolean on :class:`Sandbox`: a memory-pause recovery can read
    ``failed`` with ``paused`` true. Compares equal to its string value."""

    UNKNOWN = "unknown"
    STARTING = "starting"
    RUNNING = "running"
    PAUSED = "paused"
    TERMINATING = "terminating"
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def _from_code(cls, code: int) -> "SandboxStatus":
        try:
            return cls(capi.status_name(code))
        except ValueError:
            return cls.UNKNOWN

    def _code(self) -> int:
        return capi.status_from_name(self.value)


def _json(text: Optional[str]) -> Dict[str, Any]:
    if not text:
        return {}
    try:
        v = json.loads(text)
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


@dataclass(frozen=True)
class Sandbox:
    """A sandbox as one response described it (``GET /sandboxes/{id}``,
    list items, claim and wait results).

    ``runtime_id`` is ``""`` while paused; ``runtime_generation`` grows by one
    on each resume that starts a new runtime. ``raw`` holds the whole JSON
    object, including fields the library does not model.
    """

    id: str
    template_id: str
    team_id: str
    status: SandboxStatus
    paused: bool
    auto_resume: bool
    pod_name: str
    runtime_id: str
    runtime_generation: int
    expires_at: Optional[datetime]
    hard_expires_at: Optional[datetime]
    created_at: Optional[datetime]
    updated_at: Optional[datetime]
    claimed_at: Optional[datetime]
    raw: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def sandbox_id(self) -> str:
        """Alias of :attr:`id` (claim responses call it ``sandbox_id``)."""
        return self.id

    @classmethod
    def _from_native(cls, c: "capi.CSandboxInfo") -> "Sandbox":
        return cls(
            id=c.id(),
            template_id=c.template_id(),
            team_id=c.team_id(),
            status=SandboxStatus._from_code(c.status()),
            paused=c.paused(),
            auto_resume=c.auto_resume(),
            pod_name=c.pod_name(),
            runtime_id=c.runtime_id(),
            runtime_generation=c.runtime_generation(),
            expires_at=from_unix_ms(c.expires_at_unix_ms()),
            hard_expires_at=from_unix_ms(c.hard_expires_at_unix_ms()),
            created_at=from_unix_ms(c.created_at_unix_ms()),
            updated_at=from_unix_ms(c.updated_at_unix_ms()),
            claimed_at=from_unix_ms(c.claimed_at_unix_ms()),
            raw=_json(c.json()),
        )


@dataclass(frozen=True)
class RefreshResult:
    """Answer of ``POST /sandboxes/{id}/refresh``: the new deadlines."""

    sandbox_id: str
    expires_at: Optional[datetime]
    hard_expires_at: Optional[datetime]
    raw: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def _from_native(cls, c: "capi.CSandboxInfo") -> "RefreshResult":
        return cls(c.id(), from_unix_ms(c.expires_at_unix_ms()),
                   from_unix_ms(c.hard_expires_at_unix_ms()), _json(c.json()))


@dataclass(frozen=True)
class LifecycleResult:
    """Answer of pause, resume or restore.

    - pause: ``paused`` is true only once the checkpoint is committed;
      ``http_status`` 202 means the durable intent was recorded while the
      node channel is down (the pause goes on).
    - resume: ``resumed`` false means the durable work was accepted and goes
      on; poll (or use ``resume_and_wait``).
    - restore: ``snapshot_id`` and ``status`` (``paused``).
    """

    sandbox_id: str
    status: SandboxStatus
    paused: bool
    resumed: bool
    snapshot_id: Optional[str]
    http_status: int
    raw: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def accepted(self) -> bool:
        """True for an accepted pause (200 or 202)."""
        return self.http_status in (200, 202)

    @classmethod
    def _from_native(cls, c: "capi.CLifecycleResult") -> "LifecycleResult":
        return cls(c.sandbox_id(), SandboxStatus._from_code(c.status()), c.paused(), c.resumed(),
                   c.snapshot_id(), c.http_status(), _json(c.json()))


PauseResult = LifecycleResult
ResumeResult = LifecycleResult
RestoreResult = LifecycleResult


@dataclass(frozen=True)
class SandboxPage:
    """One page of ``GET /sandboxes`` (newest first)."""

    sandboxes: List[Sandbox]
    count: int
    """Total matches before paging."""
    has_more: bool
    """``offset + limit < count``."""
    offset: int
    limit: int

    @property
    def next_offset(self) -> int:
        """Offset of the next page: this offset plus this page's length."""
        return self.offset + len(self.sandboxes)

    def __iter__(self) -> Iterator[Sandbox]:
        return iter(self.sandboxes)

    def __len__(self) -> int:
        return len(self.sandboxes)


@dataclass(frozen=True)
class Snapshot:
    """A named RootFS snapshot (filesystem state only)."""

    id: str
    sandbox_id: str
    name: str
    description: str
    created_at: Optional[datetime]
    expires_at: Optional[datetime]
    raw: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def _from_native(cls, c: "capi.CSnapshotInfo") -> "Snapshot":
        return cls(c.id(), c.sandbox_id(), c.name(), c.description(),
                   from_unix_ms(c.created_at_unix_ms()), from_unix_ms(c.expires_at_unix_ms()),
                   _json(c.json()))


class FileType(str, enum.Enum):
    """``FileInfo.type``."""

    UNKNOWN = "unknown"
    FILE = "file"
    DIR = "dir"
    SYMLINK = "symlink"

    def __str__(self) -> str:
        return self.value


_FILE_TYPES = {0: FileType.UNKNOWN, 1: FileType.FILE, 2: FileType.DIR, 3: FileType.SYMLINK}


@dataclass(frozen=True)
class FileInfo:
    """One entry of the files API (``lstat``: symlinks are not followed)."""

    name: str
    path: str
    type: FileType
    size: int
    """Size in bytes."""
    mode: int
    """Permission bits, e.g. ``0o644``."""
    mod_time: Optional[datetime]
    is_link: bool
    link_target: Optional[str]

    @property
    def is_dir(self) -> bool:
        return self.type == FileType.DIR

    @classmethod
    def _from_native(cls, c: "capi.CFileInfo") -> "FileInfo":
        return cls(c.name(), c.path(), _FILE_TYPES.get(c.type(), FileType.UNKNOWN),
                   c.size_bytes(), c.mode(), from_unix_ms(c.mod_time_unix_ms()), c.is_link(),
                   c.link_target())
