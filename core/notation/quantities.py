"""Durations and sizes shown to people: Babel, in the user's locale (sizes: notation.sizes).
One notation for ``coven status`` and the app's Diagnostics: a lag of 30 ms reads as such in
both, not as "1 second" in one of them."""

from __future__ import annotations

from datetime import timedelta

from babel.dates import format_timedelta
from babel.units import format_unit

from coven_core.notation.sizes import size_text as size_text


def duration_text(seconds: float | None, locale: str) -> str:
    """``55 seconds``, ``3 hours``; below a second in milliseconds; ``—`` for nothing measured.

    A threshold of 1 keeps 55 seconds as seconds instead of rounding it up to a minute.
    """
    if seconds is None:
        return "—"
    if 0 < abs(seconds) < 1:
        return format_unit(round(seconds * 1000), "duration-millisecond", locale=locale)
    return format_timedelta(timedelta(seconds=seconds), threshold=1, locale=locale)
