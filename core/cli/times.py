"""Times shown to people: Babel, in the user's locale; UTC for scripts and logs."""

from __future__ import annotations

from datetime import datetime

from babel.dates import format_datetime

from coven_core.tz import tzdb


def wall_text(wall: datetime, locale: str, length: str = "medium") -> str:
    """A naive wall time as it is (Babel reads it as UTC and we give no zone to convert to)."""
    return format_datetime(wall, format=length, locale=locale)


def local_text(instant: datetime, zone_key: str, locale: str, length: str = "medium") -> str:
    """An aware instant as the wall time in ``zone_key``."""
    return format_datetime(instant, format=length, tzinfo=tzdb.zone(zone_key), locale=locale)


def maybe_local_text(instant: datetime | None, zone_key: str, locale: str) -> str:
    return "—" if instant is None else local_text(instant, zone_key, locale)


def instant_in(text: str) -> datetime | None:
    """An ISO 8601 instant as the engine stores and reports it (``…Z`` or ``…+00:00``); None
    when it is not one, so evidence that is damaged is still shown as it is."""
    try:
        instant = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return instant if instant.utcoffset() is not None else None
