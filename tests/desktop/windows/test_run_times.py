"""How the Runs page and a run's window write an instant (``run_times``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from coven_desktop.windows.run_times import clock

NNBSP = "\u202f"  # CLDR's space before AM/PM

#: The viewer's zone: these are written in the computer's local time.
pytestmark = pytest.mark.usefixtures("in_berlin")


STARTED = datetime(2026, 12, 7, 18, 21, 47, tzinfo=UTC)  # 7:21:47 PM in Berlin


def test_a_start_on_the_planned_day_is_its_time_alone() -> None:
    planned = datetime(2026, 12, 7, 18, 0, tzinfo=UTC)
    assert clock(STARTED, "en_US", same_day_as=planned) == f"7:21:47{NNBSP}PM"


def test_a_start_on_another_day_adds_the_day_and_the_year_only_when_it_differs() -> None:
    """Not "Dec 7, 2026, 7:21:47 PM", which the column cut: the year says nothing new."""
    day_before = datetime(2026, 12, 6, 19, 0, tzinfo=UTC)
    assert clock(STARTED, "en_US", same_day_as=day_before) == f"Dec 7, 7:21:47{NNBSP}PM"
    german = clock(STARTED, "de_DE", same_day_as=day_before)
    assert german.startswith("7.") and german.endswith("19:21:47") and "2026" not in german
    year_before = datetime(2025, 12, 31, 22, 0, tzinfo=UTC)
    assert clock(STARTED, "en_US", same_day_as=year_before) == f"Dec 7, 2026, 7:21:47{NNBSP}PM"
