"""Durations as people type them: ``90s``, ``15m``, ``2h``, ``1d``, ``1h30m``; ``none``.

One reading for every front end: the ``coven`` options (``--grace``, ``--timeout``) and the
desktop's routine form."""

from __future__ import annotations

import re
from datetime import timedelta

from coven_core.errors import ValidationError

# Largest unit first, each at most once: "1h30m" reads one way only; "30m1h" is a typo.
_PATTERN = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
NO_LIMIT = "none"


class DurationError(ValidationError):
    def __init__(self, text: str, problem: str = "is not a duration like 90s, 15m, 2h or 1d"):
        super().__init__(f"{text!r} {problem}")


def parse_duration(text: str) -> timedelta:
    """A positive duration, or a DurationError that quotes what was typed."""
    value = text.strip().lower()
    match = _PATTERN.fullmatch(value)
    if not value or match is None:
        raise DurationError(text)
    seconds = sum(int(n) * size for n, (_, size) in zip(match.groups(), _UNITS, strict=True) if n)
    if seconds == 0:
        raise DurationError(text, "is not longer than zero")
    return timedelta(seconds=seconds)


def parse_limit(text: str) -> timedelta | None:
    """A duration, or ``none`` for no limit."""
    return None if text.strip().lower() == NO_LIMIT else parse_duration(text)


def format_duration(duration: timedelta | None) -> str:
    """The inverse of :func:`parse_limit`: ``1h30m``, ``none``."""
    if duration is None:
        return NO_LIMIT
    rest, parts = int(duration.total_seconds()), []
    for unit, size in _UNITS:
        count, rest = divmod(rest, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
