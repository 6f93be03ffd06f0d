"""Base exception classes of libsandbox0 (hand-written part).

The per-code subclasses are generated from the C error table into
``_codes.py``; ``libsandbox0.errors`` re-exports everything.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Type

if TYPE_CHECKING:  # pragma: no cover
    from .models import Sandbox


class Sandbox0Error(Exception):
    """Base class of every error the package raises.

    Attributes (all errors carry them; fields that do not apply are None):

    - ``code``: the wire ``error.code`` as the server sent it (for example
      ``"not_found"``, ``"file_not_found"``, ``"sandbox_resume_failed"``), or,
      for errors produced locally, the library's code name (``"timeout"``,
      ``"canceled"``, ``"transport"``...).
    - ``kind``: the library's code name (``s0_code_name``), one per class.
    - ``s0_code``: the library's numeric code (negative).
    - ``reason``: a stable snake_case reason (``"waking_up"``,
      ``"memory_unavailable"``, ``"wait_deadline"``, ``"curl:7"``...).
    - ``message``: human-readable text.
    - ``status_code``: HTTP status of the failing response, None when the
      error did not come from an HTTP answer.
    - ``request_id``, ``details`` (decoded JSON), ``body`` (raw bytes).
    - ``retry_after``: Retry-After in whole seconds (rounded up), like the
      official SDKs; ``retry_after_ms`` in milliseconds. None when absent.
    - ``sandbox_id``, ``action`` (``"memory pause"``/``"memory resume"``),
      ``last_sandbox`` (the last :class:`~libsandbox0.Sandbox` a wait saw),
      ``timeout_sec`` (a wait's budget), ``cause`` (a wrapped error, also
      ``__cause__``), ``retryable``.
    """

    __module__ = "libsandbox0.errors"
    s0_code: int = -1
    kind: str = "error"

    def __init__(
        self,
        message: str = "",
        *,
        code: Optional[str] = None,
        reason: Optional[str] = None,
        status_code: Optional[int] = None,
        request_id: Optional[str] = None,
        details: Any = None,
        body: Optional[bytes] = None,
        retry_after_ms: Optional[int] = None,
        sandbox_id: Optional[str] = None,
        action: Optional[str] = None,
        last_sandbox: Optional["Sandbox"] = None,
        timeout_sec: Optional[float] = None,
        cause: Optional["Sandbox0Error"] = None,
        retryable: bool = False,
        claim_start_throttled: bool = False,
        s0_code: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.message: str = message
        if s0_code is not None:
            self.s0_code = s0_code
        self.code: str = code if code is not None else self.kind
        self.reason: str = reason if reason is not None else self.kind
        self.status_code: Optional[int] = status_code
        self.request_id: Optional[str] = request_id
        self.details: Any = details
        self.body: Optional[bytes] = body
        self.retry_after_ms: Optional[int] = (
            retry_after_ms if retry_after_ms is not None and retry_after_ms >= 0 else None
        )
        self.retry_after: Optional[int] = (
            None if self.retry_after_ms is None else int(math.ceil(self.retry_after_ms / 1000.0))
        )
        self.sandbox_id: Optional[str] = sandbox_id
        self.action: Optional[str] = action
        self.last_sandbox: Optional["Sandbox"] = last_sandbox
        self.timeout_sec: Optional[float] = timeout_sec
        self.cause: Optional[Sandbox0Error] = cause
        if cause is not None:
            self.__cause__ = cause
        self.retryable: bool = retryable
        self._claim_start_throttled = claim_start_throttled

    def is_claim_start_throttled(self) -> bool:
        """HTTP 429 with wire code ``claim_start_throttled`` (official SDK predicate)."""
        return self._claim_start_throttled

    def __str__(self) -> str:
        parts = []
        if self.status_code is not None:
            parts.append(f"status={self.status_code}")
        parts.append(f"code={self.code}")
        if self.reason != self.code:
            parts.append(f"reason={self.reason}")
        if self.request_id:
            parts.append(f"request_id={self.request_id}")
        if self.sandbox_id:
            parts.append(f"sandbox_id={self.sandbox_id}")
        parts.append(f"message={self.message}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __repr__(self) -> str:
        return str(self)

    def __reduce__(self) -> Tuple[Any, ...]:  # picklable across processes, fields kept
        return (_rebuild, (type(self), self.message, self.__dict__.copy()))


def _rebuild(cls: Type["Sandbox0Error"], message: str,
             state: Dict[str, Any]) -> "Sandbox0Error":
    obj = cls.__new__(cls, message)
    Exception.__init__(obj, message)
    obj.__dict__.update(state)
    return obj


class APIError(Sandbox0Error):
    """An error answer of the Sandbox0 API (an HTTP status and a wire code),
    or a code that has rows in the wire table raised before any request
    (``status_code`` None then). Field names follow the official SDKs'
    ``APIError``: ``status_code``, ``code``, ``message``, ``request_id``,
    ``details``, ``body``, ``retry_after`` (whole seconds); plus ``reason``
    and ``retry_after_ms``."""

    __module__ = "libsandbox0.errors"


class SandboxWaitTimeoutError(Sandbox0Error, TimeoutError):
    """A lifecycle wait reached its deadline (reason ``wait_deadline``).

    ``last_sandbox`` is the last sandbox the wait observed, ``timeout_sec``
    its budget, ``sandbox_id`` the sandbox; the server's operation goes on.
    A subclass of the built-in :class:`TimeoutError`.
    """

    __module__ = "libsandbox0.errors"
    s0_code = -15
    kind = "timeout"
