"""How values are written to the store: instants as fixed-width UTC text, so text order is
time order and a person reading the database sees real times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"

# The texts of the instants a process wrote lately. A pass writes its own instant once per row
# it touches and the same few others (a routine's horizon, the lease's terms) every time, so
# most conversions are repeats. Only UTC instants are remembered: two datetimes in one zone
# compare equal on their wall times alone, so 02:30 in an autumn fold would find the text of
# the other 02:30, an hour away. Reading needs no such memory: ``fromisoformat`` is cheaper
# than the lookup that would save it.
_TEXTS: dict[datetime, str] = {}
_KEEP = 512  # entries; then the memory starts again (a bound, not an LRU)


def instant_text(instant: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ``. From ``isoformat``, which writes exactly that shape
    for a UTC instant from year 1000 on at a third of ``strftime``'s cost; earlier years keep
    ``strftime``'s spelling, whatever the platform's is."""
    if instant.tzinfo is not UTC:
        return _instant_text(instant)
    text = _TEXTS.get(instant)
    if text is None:
        text = _instant_text(instant)
        _remember(_TEXTS, instant, text)
    return text


def _instant_text(instant: datetime) -> str:
    if instant.tzinfo is not UTC:
        if instant.utcoffset() is None:
            raise ValueError("instants are stored as aware datetimes only")
        instant = instant.astimezone(UTC)
    if instant.year < 1000:
        return instant.strftime(_FORMAT)
    return instant.isoformat(timespec="microseconds")[:-6] + "Z"


def instant_from(text: str) -> datetime:
    """The instant ``instant_text`` wrote; anything else is a ValueError naming the format.

    Text of exactly that shape (its separators in place, checked in one slice) is read by
    ``fromisoformat``, which reads the trailing ``Z`` as UTC and accepts no other layout of
    this length with these separators: ``strptime`` costs many times more (bench_bookkeeping's
    row "CPU (user + system) per occurrence"), and a thousand routines read at once (the
    Routines page, bench_routines_page's "its reload") are a thousand different instants."""
    if len(text) == 27 and text[26] == "Z" and text[4:20:3] == "--T::.":
        return datetime.fromisoformat(text)
    return datetime.strptime(text, _FORMAT).replace(tzinfo=UTC)


def any_instant_from(text: str) -> datetime:
    """An instant in the store's format, or in ISO 8601 with its offset (as ``isoformat``
    writes it into event data); a ValueError otherwise."""
    try:
        return instant_from(text)
    except ValueError:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError(f"{text!r}: an instant needs its offset")
    return parsed.astimezone(UTC)


def _remember(cache: dict[Any, Any], key: object, value: object) -> None:
    if len(cache) >= _KEEP:
        cache.clear()  # another thread may be reading: it only misses
    cache[key] = value


def maybe_instant_from(text: str | None) -> datetime | None:
    return None if text is None else instant_from(text)


def maybe_instant_text(instant: datetime | None) -> str | None:
    return None if instant is None else instant_text(instant)


def seconds_of(delta: timedelta | None) -> float | None:
    return None if delta is None else delta.total_seconds()


def delta_from(seconds: float | None) -> timedelta | None:
    return None if seconds is None else timedelta(seconds=seconds)
