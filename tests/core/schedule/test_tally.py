"""Counted moments against walked ones: a tally stands for exactly the moments it replaces."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from coven_core.schedule.tally import Tally, tallied
from coven_core.schedule.timetable import Timetable
from coven_core.tz.binding import BoundTime

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia",
         "Asia/Kolkata", "Pacific/Chatham", "America/Santiago", "Africa/Casablanca"]  # fmt: skip
SPECS = ["*/5 * * * *", "*/15 * * * *", "0 * * * *", "30 2 * * *", "0 0 * * *", "30 1 * * 0",
         "7,52 */3 1-9,20 * *", "0 12 13 * 5", "0 0 29 2 *", "every 5m", "every 7h", "every 1d",
         "rrule:FREQ=HOURLY;BYMINUTE=15", "once 2026-03-29T02:30"]  # fmt: skip


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def checked(
    table: Timetable, start: datetime, end: datetime, apart: tuple[date, ...] = ()
) -> list[BoundTime | Tally]:
    """Assert that the tallied moments are the walked ones, a tally standing for a run of
    real moments on no date in ``apart``, followed by a moment; return them."""
    walked = list(table.moments_between(start, end))
    items = list(tallied(table, start, end, apart))
    at = 0
    for index, item in enumerate(items):
        if isinstance(item, Tally):
            run = walked[at : at + item.count]
            assert len(run) == item.count >= 1
            assert (run[0].utc, run[-1].utc) == (item.first, item.last)
            assert not any(m.skipped or m.local.date() in apart for m in run)
            assert isinstance(items[index + 1], BoundTime)
            at += item.count
        else:
            assert item == walked[at]
            at += 1
    assert at == len(walked)
    return items


def test_a_month_of_five_minutes_is_one_tally_and_its_last_moment() -> None:
    table = Timetable.build("*/5 * * * *", "UTC", utc(2026, 1, 1))
    items = checked(table, utc(2026, 3, 1, 8, 59), utc(2026, 3, 31, 8, 59, 5))
    assert items == [Tally(utc(2026, 3, 1, 9), utc(2026, 3, 31, 8, 50), 8639), items[-1]]
    assert isinstance(items[-1], BoundTime) and items[-1].utc == utc(2026, 3, 31, 8, 55)


def test_moments_near_a_dst_change_are_walked() -> None:
    table = Timetable.build("30 2 * * *", "Europe/Berlin", utc(2026, 1, 1))
    items = checked(table, utc(2026, 3, 1), utc(2026, 4, 30))
    gap = [m for m in items if isinstance(m, BoundTime) and m.skipped]
    assert [m.local.date() for m in gap] == [date(2026, 3, 29)]
    assert sum(isinstance(m, Tally) for m in items) == 2


def test_an_excluded_date_is_walked() -> None:
    table = Timetable.build("every 15m", "Asia/Kolkata", utc(2026, 1, 1))
    apart = (date(2026, 3, 10),)
    items = checked(table, utc(2026, 3, 1), utc(2026, 3, 20), apart)
    on_the_day = [m for m in items if isinstance(m, BoundTime) and m.local.date() in apart]
    assert len(on_the_day) == 96


def test_rrule_is_walked() -> None:
    table = Timetable.build("rrule:FREQ=HOURLY", "UTC", utc(2026, 1, 1))
    assert not any(isinstance(m, Tally) for m in checked(table, utc(2026, 3, 1), utc(2026, 3, 3)))


@settings(max_examples=200, deadline=None)
@given(
    zone_key=st.sampled_from(ZONES),
    spec=st.sampled_from(SPECS),
    start=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2036, 1, 1)),
    length=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=70)),
    apart=st.lists(st.integers(min_value=-3, max_value=72), max_size=3),
)
def test_tallied_moments_are_the_walked_moments(
    zone_key: str, spec: str, start: datetime, length: timedelta, apart: list[int]
) -> None:
    start_utc = start.replace(tzinfo=UTC)
    table = Timetable.build(spec, zone_key, start_utc - timedelta(days=40))
    days = tuple(sorted({start.date() + timedelta(days=n) for n in apart}))
    checked(table, start_utc, start_utc + length, days)
