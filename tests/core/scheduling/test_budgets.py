"""Budgets' days (DESIGN §14): calendar days in the routine's zone, whatever their length."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from coven_core.errors import ZoneError
from coven_core.model import RevisionSpec
from coven_core.scheduling import budgets
from coven_core.tz import tzdb


def _spec(zone: str) -> RevisionSpec:
    return RevisionSpec("@hourly", zone, ("/bin/true",), max_runs_per_day=1)


def test_a_spring_forward_day_is_23_hours_long() -> None:
    now = datetime(2026, 3, 8, 15, tzinfo=UTC)
    day, start, end = budgets.day_bounds(_spec("America/New_York"), now)
    assert (day, start, end - start) == (
        date(2026, 3, 8), datetime(2026, 3, 8, 5, tzinfo=UTC), timedelta(hours=23),
    )  # fmt: skip


def test_a_lost_zone_counts_utc_days_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def lost(key: str) -> object:
        raise ZoneError(f"unknown time zone {key!r}")

    monkeypatch.setattr(tzdb, "zone", lost)
    now = datetime(2026, 3, 8, 23, tzinfo=UTC)
    day, start, _end = budgets.day_bounds(_spec("Asia/Tokyo"), now)
    assert (day, start) == (date(2026, 3, 8), datetime(2026, 3, 8, tzinfo=UTC))
    assert budgets._zone_name(_spec("Asia/Tokyo")) == "UTC"
