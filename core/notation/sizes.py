"""Sizes in one notation everywhere: SI units through Babel, in the person's locale (``12.3
MB``, ``12,3 MB``), so no screen puts MiB beside kB (DESIGN §12). The CLI, the doctor and the
app all use :func:`size_text`."""

from __future__ import annotations

from babel.units import format_unit

# SI steps, to match the CLDR unit names (a kilobyte is 1000 bytes there).
_SIZE_UNITS = (
    (10**9, "digital-gigabyte"),
    (10**6, "digital-megabyte"),
    (10**3, "digital-kilobyte"),
)


def size_text(size: int, locale: str = "en_US") -> str:
    """``12.3 MB``: one decimal at most, in the largest unit the size reaches."""
    for step, unit in _SIZE_UNITS:
        if size >= step:
            return format_unit(size / step, unit, length="short", format="#,##0.#", locale=locale)
    return format_unit(size, "digital-byte", locale=locale)
