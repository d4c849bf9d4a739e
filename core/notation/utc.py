"""Instants as scripts and logs read them: ISO 8601 in UTC, to the second (``…Z``); and a
local wall time to the second, naive (the README's rule for JSON times).

A module of its own so that readers such as ``coven status`` format instants without loading
the schedule machinery that :mod:`coven_core.views.preview` needs."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_text(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def local_seconds(local: str | None) -> str | None:
    """A stored local wall time (naive ISO) to the second: a manual run's has microseconds,
    a scheduled one's none, and JSON gives the field one format."""
    return None if local is None else datetime.fromisoformat(local).isoformat(timespec="seconds")
