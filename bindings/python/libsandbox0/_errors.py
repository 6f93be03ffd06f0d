"""Conversion of C errors (capi.CError) into Python exceptions.

The extension calls :func:`_from_native` while raising, inside the wrapper
call that failed; every field is copied, so no C object outlives it.
"""
from __future__ import annotations

import json
from typing import Any, Optional, Type

from . import capi
from ._codes import CLASS_BY_CODE, ETIMEDOUT
from ._errbase import APIError, Sandbox0Error, SandboxWaitTimeoutError


def _class_for(code: int, reason: str, http_status: int) -> Type[Sandbox0Error]:
    if code == ETIMEDOUT and reason == "wait_deadline":
        return SandboxWaitTimeoutError
    cls = CLASS_BY_CODE.get(code)
    if cls is not None:
        return cls
    return APIError if http_status else Sandbox0Error


def _from_native(e: "capi.CError", _depth: int = 0) -> Sandbox0Error:
    from .models import Sandbox  # late: models imports errors

    code = e.code()
    reason = e.reason()
    status = e.http_status()
    details: Any = None
    dj = e.details_json()
    if dj:
        try:
            details = json.loads(dj)
        except ValueError:
            details = dj
    last = e.last_sandbox()
    cause_native = e.cause()
    cause: Optional[Sandbox0Error] = None
    if cause_native is not None and _depth < 8:
        cause = _from_native(cause_native, _depth + 1)
    tmo = e.timeout_ms()
    cls = _class_for(code, reason, status)
    exc = cls(
        e.message(),
        code=e.wire_code() or capi.code_name(code),
        reason=reason,
        status_code=status or None,
        request_id=e.request_id(),
        details=details,
        body=e.body(),
        retry_after_ms=e.retry_after_ms(),
        sandbox_id=e.sandbox_id(),
        action=e.action(),
        last_sandbox=Sandbox._from_native(last) if last is not None else None,
        timeout_sec=tmo / 1000.0 if tmo > 0 else None,
        cause=cause,
        retryable=e.is_retryable(),
        claim_start_throttled=e.is_claim_start_throttled(),
        s0_code=code if cls.s0_code != code else None,
    )
    return exc
