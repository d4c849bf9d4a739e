"""The planner's decisions with counted moments are those of walking every moment."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coven_core.model import MisfirePolicy, MissedCause, RevisionSpec
from coven_core.schedule.timetable import Timetable
from coven_core.scheduling import planner
from coven_core.scheduling.planner import Segment, WindowPlan, fold_all, plan_window
from coven_core.tz.binding import BoundTime

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia",
         "Pacific/Chatham", "America/Santiago"]  # fmt: skip
SPECS = ["* * * * *", "*/5 * * * *", "*/15 * * * *", "0 * * * *", "30 2 * * *", "0 0 * * *", "30 1 * * 0",
         "every 5m", "every 7h", "rrule:FREQ=HOURLY;BYMINUTE=15"]  # fmt: skip
CAUSE = MissedCause.APP_NOT_RUNNING


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def walked_due(segments: Iterable[Segment], now: datetime) -> Iterator[tuple[Segment, BoundTime]]:
    """The planner's moments as it found them before it counted any: every one, walked."""
    for segment in segments:
        end = min(segment.end, now + timedelta(microseconds=1))
        if segment.start < end:
            for moment in segment.timetable.moments_between(segment.start, end):
                yield segment, moment


def walked(table: Timetable, start: datetime, end: datetime) -> Iterator[BoundTime]:
    return table.moments_between(start, end)


def segment(
    number: int, spec: str, zone: str, start: datetime, end: datetime, **options: Any
) -> Segment:
    revision = RevisionSpec(spec, zone, ("/bin/true",), **options)
    table = Timetable.build(spec, zone, start - timedelta(days=3))
    return Segment(number, revision, table, start, end)


def counted_and_walked(segments: list[Segment], now: datetime) -> tuple[WindowPlan, WindowPlan]:
    counted = plan_window(segments, now, CAUSE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(planner, "_due", walked_due)
        return counted, plan_window(segments, now, CAUSE)


def test_a_month_switched_off_is_one_window_and_the_moment_due_now_runs() -> None:
    start, now = utc(2026, 3, 1, 8, 59), utc(2026, 3, 31, 9, 0, 5)
    counted, walked_plan = counted_and_walked([segment(1, "*/5 * * * *", "UTC", start, now)], now)
    assert counted == walked_plan
    (window,) = counted.missed
    assert (window.first, window.last, window.count) == (
        utc(2026, 3, 1, 9), utc(2026, 3, 31, 8, 55), 8640
    )  # fmt: skip
    assert [p.moment.utc for p in counted.to_run] == [utc(2026, 3, 31, 9)]


def test_the_latest_missed_moment_right_after_a_tally_runs() -> None:
    """A daily moment missed yesterday morning runs once; the month before it folds."""
    start, now = utc(2026, 3, 1, 8, 59), utc(2026, 3, 31, 8, 0)
    counted, walked_plan = counted_and_walked([segment(1, "0 9 * * *", "UTC", start, now)], now)
    assert counted == walked_plan
    assert [p.moment.utc for p in counted.to_run] == [utc(2026, 3, 30, 9)]
    assert [(w.first, w.last, w.count) for w in counted.missed] == [
        (utc(2026, 3, 1, 9), utc(2026, 3, 29, 9), 29)
    ]


def test_a_moment_a_minute_late_is_on_time_not_counted() -> None:
    start, now = utc(2026, 3, 1, 8, 59), utc(2026, 3, 31, 9)
    every_minute = segment(1, "* * * * *", "UTC", start, now + timedelta(microseconds=1))
    counted, walked_plan = counted_and_walked([every_minute], now)
    assert counted == walked_plan
    assert [p.moment.utc for p in counted.to_run] == [utc(2026, 3, 31, 8, 59), now]


@st.composite
def windows(draw: st.DrawFn) -> tuple[list[Segment], datetime]:
    """One to three revisions' segments, some with a broken span between them, and a now."""
    at = draw(st.datetimes(datetime(2000, 1, 1), datetime(2036, 1, 1))).replace(tzinfo=UTC)
    segments: list[Segment] = []
    for number in range(1, draw(st.integers(1, 3)) + 1):
        if segments and draw(st.booleans()):
            at += draw(st.timedeltas(timedelta(minutes=1), timedelta(days=5)))  # broken
        end = at + draw(st.timedeltas(timedelta(0), timedelta(days=40)))
        days = draw(st.lists(st.integers(-1, 41), max_size=2))
        options = {
            "misfire": draw(st.sampled_from(MisfirePolicy)),
            "grace": draw(st.none() | st.timedeltas(timedelta(0), timedelta(days=2))),
            "except_dates": tuple(sorted({at.date() + timedelta(days=n) for n in days})),
        }
        spec, zone = draw(st.sampled_from(SPECS)), draw(st.sampled_from(ZONES))
        segments.append(segment(number, spec, zone, at, end, **options))
        at = end
    now = at + draw(st.timedeltas(-timedelta(days=3), timedelta(hours=3)))
    return segments, now


@settings(max_examples=150, deadline=None)
@given(windows())
def test_counted_plan_is_the_walked_plan(window: tuple[list[Segment], datetime]) -> None:
    counted, walked_plan = counted_and_walked(*window)
    assert counted == walked_plan


@settings(max_examples=60, deadline=None)
@given(windows())
def test_counted_fold_is_the_walked_fold(window: tuple[list[Segment], datetime]) -> None:
    segments = [s for s in window[0] if s.start < s.end]
    counted = fold_all(segments, CAUSE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(planner, "tallied", lambda table, start, end: walked(table, start, end))
        assert counted == fold_all(segments, CAUSE)


def test_an_excluded_date_in_a_month_keeps_its_own_rows() -> None:
    start, now = utc(2026, 3, 1), utc(2026, 3, 31, 12)
    day = date(2026, 3, 15)
    only = segment(1, "0 * * * *", "Europe/Berlin", start, now, except_dates=(day,))
    counted, walked_plan = counted_and_walked([only], now)
    assert counted == walked_plan
    assert {p.moment.local.date() for p in counted.excluded} == {day}
    assert len(counted.excluded) == 24
    assert len(counted.gaps) == 1  # 29 March, 02:00 in Berlin
