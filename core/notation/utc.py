"""Instants as scripts and logs read them: ISO 8601 in UTC, to the second (``…Z``).

A module of its own so that readers such as ``coven status`` format instants without loading
the schedule machinery that :mod:`coven_core.views.preview` needs."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_text(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
