"""Schedules bound to zones: what a person would see across DST, as named vectors."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coven_core.errors import ScheduleError, ZoneError
from coven_core.schedule.timetable import ScheduleKind, Timetable, classify
from coven_core.tz.binding import LocalTimeKind


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def walls(table: Timetable, start: datetime, end: datetime) -> list[tuple[str, str, str]]:
    return [
        (f"{m.local:%m-%d %H:%M}", f"{m.utc:%d %H:%M}", "skip" if m.skipped else m.kind.value)
        for m in table.moments_between(start, end)
    ]


def test_daily_0230_new_york_skips_the_spring_gap_day() -> None:
    table = Timetable.build("30 2 * * *", "America/New_York", utc(2026, 3, 1))
    moments = list(table.moments_between(utc(2026, 3, 7), utc(2026, 3, 10)))
    assert [(f"{m.local:%d}", m.skipped) for m in moments] == [
        ("07", False),
        ("08", True),
        ("09", False),
    ]
    assert moments[1].reason == "nonexistent_local_time"
    assert moments[1].utc == utc(2026, 3, 8, 7, 30)  # nominal: pre-transition offset


def test_half_hourly_through_the_new_york_gap_keeps_wall_order() -> None:
    table = Timetable.build("cron:*/30 * * * *", "America/New_York", utc(2026, 3, 1))
    assert walls(table, utc(2026, 3, 8, 6, 0), utc(2026, 3, 8, 7, 31)) == [
        ("03-08 01:00", "08 06:00", "regular"),
        ("03-08 01:30", "08 06:30", "regular"),
        ("03-08 02:00", "08 07:00", "skip"),
        ("03-08 02:30", "08 07:30", "skip"),
        ("03-08 03:00", "08 07:00", "regular"),
        ("03-08 03:30", "08 07:30", "regular"),
    ]


def test_daily_0130_new_york_runs_once_on_the_fold_day() -> None:
    table = Timetable.build("30 1 * * *", "America/New_York", utc(2026, 10, 1))
    moments = list(table.moments_between(utc(2026, 11, 1), utc(2026, 11, 2)))
    assert len(moments) == 1
    assert moments[0].utc == utc(2026, 11, 1, 5, 30)
    assert (moments[0].kind, moments[0].fold) == (LocalTimeKind.REPEATED, 0)


def test_range_starting_in_the_second_pass_does_not_repeat_the_fold() -> None:
    table = Timetable.build("*/15 * * * *", "America/New_York", utc(2026, 10, 1))
    moments = list(table.moments_between(utc(2026, 11, 1, 6, 20), utc(2026, 11, 1, 7, 20)))
    assert [f"{m.local:%H:%M}" for m in moments] == ["02:00", "02:15"]


def test_interval_is_absolute_across_the_fold() -> None:
    table = Timetable.build("every 30m", "America/New_York", utc(2026, 11, 1, 5, 0))
    moments = list(table.moments_between(utc(2026, 11, 1, 5, 0), utc(2026, 11, 1, 7, 0)))
    assert [(f"{m.local:%H:%M}", m.fold) for m in moments] == [
        ("01:00", 0),
        ("01:30", 0),
        ("01:00", 1),
        ("01:30", 1),
    ]
    assert not any(m.skipped for m in moments)


def test_interval_ignores_the_spring_gap() -> None:
    table = Timetable.build("every 1h", "America/New_York", utc(2026, 3, 8, 5, 0))
    moments = list(table.moments_between(utc(2026, 3, 8, 5), utc(2026, 3, 8, 9)))
    assert [f"{m.local:%H:%M}" for m in moments] == ["00:00", "01:00", "03:00", "04:00"]


def test_interval_anchor_rounds_up_to_the_minute() -> None:
    table = Timetable.build("every 15m", "UTC", utc(2026, 1, 1, 0, 0, 30))
    first = next(table.moments_from(utc(2026, 1, 1)))
    assert first.utc == utc(2026, 1, 1, 0, 1)


def test_once_in_a_gap_is_one_skipped_moment() -> None:
    table = Timetable.build("once 2026-03-08T02:30", "America/New_York", utc(2026, 1, 1))
    moments = list(table.moments_from(utc(2026, 1, 1)))
    assert len(moments) == 1 and moments[0].skipped


def test_once_in_the_past_yields_nothing() -> None:
    table = Timetable.build("once 2026-01-01T09:00", "Europe/Berlin", utc(2026, 1, 1))
    assert list(table.moments_from(utc(2026, 2, 1))) == []


def test_sao_paulo_2018_midnight_daily_is_skipped_on_the_gap_day() -> None:
    table = Timetable.build("@daily", "America/Sao_Paulo", utc(2018, 10, 1))
    moments = list(table.moments_between(utc(2018, 11, 3), utc(2018, 11, 6)))
    assert [(f"{m.local:%d %H:%M}", m.skipped) for m in moments] == [
        ("03 00:00", False),
        ("04 00:00", True),
        ("05 00:00", False),
    ]


def test_apia_2011_daily_skips_the_missing_day() -> None:
    table = Timetable.build("0 9 * * *", "Pacific/Apia", utc(2011, 12, 1))
    moments = list(table.moments_between(utc(2011, 12, 28, 20), utc(2012, 1, 1, 19)))
    assert [(f"{m.local:%d}", m.skipped) for m in moments] == [
        ("29", False),
        ("30", True),
        ("31", False),
        ("01", False),
    ]
    # The missing day's nominal instant is the next real run's instant: ids must tell them apart.
    assert moments[1].utc == moments[2].utc == utc(2011, 12, 30, 19)


def test_lord_howe_every_quarter_hour_skips_half_an_hour() -> None:
    table = Timetable.build("*/15 * * * *", "Australia/Lord_Howe", utc(2026, 9, 1))
    moments = list(table.moments_between(utc(2026, 10, 3, 15, 0), utc(2026, 10, 3, 15, 50)))
    skipped = [f"{m.local:%H:%M}" for m in moments if m.skipped]
    assert skipped == ["02:00", "02:15"]


def test_rrule_last_friday_in_berlin_uses_dtstart_as_anchor() -> None:
    table = Timetable.build(
        "rrule:FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=18;BYMINUTE=0", "Europe/Berlin", utc(2026, 1, 1)
    )
    moments = list(table.moments_between(utc(2026, 1, 1), None, 3))
    assert [f"{m.local:%Y-%m-%d %H:%M}" for m in moments] == [
        "2026-01-30 18:00",
        "2026-02-27 18:00",
        "2026-03-27 18:00",
    ]


def test_rrule_utc_until_bounds_instants() -> None:
    table = Timetable.build(
        "rrule:FREQ=DAILY;BYHOUR=9;BYMINUTE=0;UNTIL=20260105T080000Z",
        "Europe/Berlin",
        utc(2026, 1, 1),
    )
    moments = list(table.moments_from(utc(2026, 1, 1)))
    assert [f"{m.local:%d}" for m in moments] == ["01", "02", "03", "04", "05"]


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        ("cron:*/5 * * * *", ScheduleKind.CRON),
        ("*/5 * * * *", ScheduleKind.CRON),
        ("@hourly", ScheduleKind.CRON),
        ("rrule:FREQ=DAILY", ScheduleKind.RRULE),
        ("every 5m", ScheduleKind.INTERVAL),
        ("once 2026-01-01T00:00", ScheduleKind.ONCE),
    ],
)
def test_classify(spec: str, kind: ScheduleKind) -> None:
    assert classify(spec)[0] is kind


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tomorrow", "unrecognised schedule 'tomorrow'"),
        ("every 0m", "at least 1 minute"),
        ("every 5 weeks", "is not like 'every 30m'"),
        ("once 2026-02-30T10:00", "is not a local date-time"),
        ("rrule:FREQ=YEARLY;BYWEEKNO=1", "unsupported RRULE part BYWEEKNO"),
        ("cron:0 0 32 * *", r"cron field 3 \(day of month\): 32 is out of range 1-31"),
    ],
)
def test_invalid_specs_name_the_problem(spec: str, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        Timetable.build(spec, "UTC", utc(2026, 1, 1))


def test_unknown_zone_is_named() -> None:
    with pytest.raises(ZoneError, match="unknown time zone 'Mars/Olympus'"):
        Timetable.build("@daily", "Mars/Olympus", utc(2026, 1, 1))


ZONES = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Sao_Paulo",
         "Pacific/Apia", "Asia/Kolkata", "Pacific/Chatham", "America/Santiago", "Asia/Gaza",
         "Africa/Casablanca"]  # fmt: skip
SPECS = ["*/15 * * * *", "30 2 * * *", "0 0 * * *", "30 1 * * 0", "0 */3 * * *",
         "rrule:FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=2;BYMINUTE=30",
         "rrule:FREQ=WEEKLY;BYDAY=SU;BYHOUR=1,2;BYMINUTE=0,30"]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    zone_key=st.sampled_from(ZONES),
    spec=st.sampled_from(SPECS),
    start=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2036, 1, 1)),
)
def test_planned_moments_are_real_and_strictly_increasing(
    zone_key: str, spec: str, start: datetime
) -> None:
    start_utc = start.replace(tzinfo=UTC)
    table = Timetable.build(spec, zone_key, start_utc - timedelta(days=40))
    moments = list(table.moments_between(start_utc, None, 60))
    planned = [m for m in moments if not m.skipped]
    assert all(a.utc < b.utc for a, b in itertools.pairwise(planned))
    assert all(a.local < b.local for a, b in itertools.pairwise(moments))
    for moment in planned:
        seen = moment.utc.astimezone(table.zone)
        assert seen.replace(tzinfo=None) == moment.local  # not in a gap; round-trips
        assert seen.utcoffset() == moment.offset
        assert moment.utc >= start_utc
    for moment in moments:
        if moment.skipped:
            assert moment.utc.astimezone(table.zone).replace(tzinfo=None) != moment.local
