"""How values are written to the store: instants as fixed-width UTC text, so text order is
time order and a person reading the database sees real times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def instant_text(instant: datetime) -> str:
    if instant.utcoffset() is None:
        raise ValueError("instants are stored as aware datetimes only")
    return instant.astimezone(UTC).strftime(_FORMAT)


def instant_from(text: str) -> datetime:
    return datetime.strptime(text, _FORMAT).replace(tzinfo=UTC)


def maybe_instant_from(text: str | None) -> datetime | None:
    return None if text is None else instant_from(text)


def maybe_instant_text(instant: datetime | None) -> str | None:
    return None if instant is None else instant_text(instant)


def seconds_of(delta: timedelta | None) -> float | None:
    return None if delta is None else delta.total_seconds()


def delta_from(seconds: float | None) -> timedelta | None:
    return None if seconds is None else timedelta(seconds=seconds)
