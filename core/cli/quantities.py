"""Durations and sizes shown to people: Babel, in the user's locale."""

from __future__ import annotations

from datetime import timedelta

from babel.dates import format_timedelta
from babel.units import format_unit

# SI steps, to match the CLDR unit names (a kilobyte is 1000 bytes there).
_SIZE_UNITS = (
    (10**9, "digital-gigabyte"),
    (10**6, "digital-megabyte"),
    (10**3, "digital-kilobyte"),
)


def duration_text(seconds: float | None, locale: str) -> str:
    """``55 seconds``, ``3 hours``; below a second in milliseconds; ``—`` for nothing measured.

    A threshold of 1 keeps 55 seconds as seconds instead of rounding it up to a minute.
    """
    if seconds is None:
        return "—"
    if 0 < abs(seconds) < 1:
        return format_unit(round(seconds * 1000), "duration-millisecond", locale=locale)
    return format_timedelta(timedelta(seconds=seconds), threshold=1, locale=locale)


def size_text(size: int, locale: str) -> str:
    """``12.3 MB``: one decimal at most, in the largest unit the size reaches."""
    for step, unit in _SIZE_UNITS:
        if size >= step:
            return format_unit(size / step, unit, length="short", format="#,##0.#", locale=locale)
    return format_unit(size, "digital-byte", locale=locale)
