"""Sizes in one notation everywhere: SI units with one decimal, through Babel (``12.3 MB``,
``12,3 MB`` in German), so no screen puts MiB beside kB (DESIGN §12)."""

from __future__ import annotations

from babel.numbers import format_decimal
from babel.units import format_unit

_STEPS = ((10**9, "digital-gigabyte"), (10**6, "digital-megabyte"), (10**3, "digital-kilobyte"))


def size_text(size: int, locale: str = "en_US") -> str:
    """``size`` bytes in ``locale``: ``1.1 MB``, ``950 B``."""
    for step, unit in _STEPS:
        if size >= step:
            return str(format_unit(size / step, unit, length="short", format="0.0", locale=locale))
    return f"{format_decimal(size, locale=locale)} B"
