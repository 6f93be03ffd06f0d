"""Small helpers shared by the package (unit conversions, tri-states)."""
from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any, Optional

from . import capi


def tri(value: Optional[bool]) -> int:
    """Map None/True/False to the C tri-state S0_BOOL_UNSET/TRUE/FALSE."""
    if value is None:
        return capi.BOOL_UNSET
    return capi.BOOL_TRUE if value else capi.BOOL_FALSE


def invalid(message: str) -> Exception:
    """An InvalidArgumentError raised before any request (no HTTP status)."""
    from .errors import InvalidArgumentError

    return InvalidArgumentError(message, reason="invalid_argument")


def timeout_ms(seconds: Optional[float], name: str = "timeout_sec") -> int:
    """Seconds -> the C convention: None = library default (0), math.inf =
    no deadline (S0_TIMEOUT_INFINITE); otherwise > 0, rounded up to whole ms."""
    if seconds is None:
        return 0
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise invalid(f"{name} must be a number of seconds")
    if math.isinf(seconds) and seconds > 0:
        return capi.TIMEOUT_INFINITE
    if math.isnan(seconds) or seconds <= 0:
        raise invalid(f"{name} must be > 0 seconds (or math.inf for no deadline)")
    return max(1, int(math.ceil(seconds * 1000)))


def duration_ms(seconds: Optional[float], name: str) -> int:
    """Seconds -> ms for poll intervals: None = library default (0); >= 0."""
    if seconds is None:
        return 0
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
        raise invalid(f"{name} must be >= 0 seconds")
    if math.isinf(seconds):
        raise invalid(f"{name} must be finite")
    return int(math.ceil(seconds * 1000))


def whole_seconds(value: Optional[int], name: str, *, allow_zero: bool = True) -> int:
    """Validate an int32 number of seconds (TTLs, durations)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(f"{name} must be an int number of seconds")
    if value < 0 or (value == 0 and not allow_zero) or value > 2**31 - 1:
        raise invalid(f"{name} out of range: {value}")
    return value


def from_unix_ms(ms: int) -> Optional[datetime]:
    """ms since the epoch -> aware UTC datetime; 0 (unset) -> None."""
    if not ms:
        return None
    return datetime.fromtimestamp(ms / 1000.0, tz=timezone.utc)


def to_unix_ms(when: Any, name: str) -> int:
    """datetime (aware, or naive meaning UTC) or epoch seconds -> ms; None -> 0."""
    if when is None:
        return 0
    if isinstance(when, datetime):
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return int(round(when.timestamp() * 1000))
    if isinstance(when, (int, float)) and not isinstance(when, bool):
        return int(round(when * 1000))
    raise invalid(f"{name} must be a datetime or epoch seconds")
