"""A preview shows the next moment a clock change decides, however far past its listed
moments (issue #22): what a person needs to see before saving a 02:30 routine in December."""

from __future__ import annotations

from datetime import UTC, datetime

from coven_core.schedule.timetable import Timetable
from coven_core.tz.binding import LocalTimeKind
from coven_core.views.preview import preview

DECEMBER = datetime(2026, 12, 5, tzinfo=UTC)


def ruled(schedule: str, zone: str, count: int = 8):  # type: ignore[no-untyped-def]
    return preview(Timetable.build(schedule, zone, DECEMBER), DECEMBER, count=count).ruled


def test_a_spring_gap_months_ahead_is_shown() -> None:
    moment = ruled("cron:30 2 * * *", "Europe/Berlin")
    assert moment is not None and moment.kind is LocalTimeKind.NONEXISTENT
    assert moment.local == datetime(2027, 3, 28, 2, 30)


def test_an_autumn_fold_is_shown_in_the_southern_hemisphere_too() -> None:
    moment = ruled("cron:30 2 * * *", "Australia/Sydney")  # clocks go back on 4 April 2027
    assert moment is not None and moment.kind is LocalTimeKind.REPEATED
    assert moment.local == datetime(2027, 4, 4, 2, 30)


def test_a_time_no_clock_change_touches_has_none() -> None:
    assert ruled("cron:0 12 * * *", "Europe/Berlin") is None
    assert ruled("cron:30 2 * * *", "UTC") is None


def test_none_when_the_listed_moments_already_hold_one() -> None:
    march = datetime(2027, 3, 26, tzinfo=UTC)
    table = Timetable.build("cron:30 2 * * *", "Europe/Berlin", march)
    shown = preview(table, march, count=4)
    assert any(m.kind is LocalTimeKind.NONEXISTENT for m in shown.moments)
    assert shown.ruled is None
