"""Every exception class of libsandbox0.

``Sandbox0Error`` is the base; ``APIError`` covers answers of the API (and
codes that exist on the wire); one subclass per library code is generated
from the C error table (``include/sandbox0/error.h``); see ``CODES``,
``WIRE_ERRORS`` and ``WIRE_REASONS`` for the tables themselves.
"""
from __future__ import annotations

from ._codes import *  # noqa: F401,F403
from ._codes import CLASS_BY_CODE, CODES, WIRE_ERRORS, WIRE_REASONS
from ._codes import __all__ as _generated
from ._errbase import APIError, Sandbox0Error, SandboxWaitTimeoutError

__all__ = ["Sandbox0Error", "APIError", "SandboxWaitTimeoutError", "CLASS_BY_CODE", "CODES",
           "WIRE_ERRORS", "WIRE_REASONS"] + list(_generated)
