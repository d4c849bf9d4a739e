"""RRULE schedules: the RFC 5545 subset of DESIGN §4, as named vectors."""

from __future__ import annotations

import calendar
import copy
import datetime as datetime_module
import pickle
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from itertools import islice

import pytest
from dateutil.rrule import rrulestr
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from coven_core.errors import ScheduleError
from coven_core.schedule.rrule import RRuleSchedule

NEW_YEAR_2025 = datetime(2025, 1, 1, 9, 0)


def _times(*texts: str) -> list[datetime]:
    return [datetime.fromisoformat(text) for text in texts]


def _first(rule: str, dtstart: datetime, n: int, start: datetime | None = None) -> list[datetime]:
    schedule = RRuleSchedule.parse(rule, dtstart)
    return list(islice(schedule.wall_times_from(start or schedule.dtstart), n))


def _error(rule: str, dtstart: datetime = NEW_YEAR_2025) -> str:
    with pytest.raises(ScheduleError) as caught:
        RRuleSchedule.parse(rule, dtstart)
    return str(caught.value)


# Calendar vectors ----------------------------------------------------------------------


def test_bymonthday_31_skips_30_day_months_and_february() -> None:
    got = _first("FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0", NEW_YEAR_2025, 8)
    assert got == _times(
        "2025-01-31T09:00",
        "2025-03-31T09:00",
        "2025-05-31T09:00",
        "2025-07-31T09:00",
        "2025-08-31T09:00",
        "2025-10-31T09:00",
        "2025-12-31T09:00",
        "2026-01-31T09:00",
    )


def test_bymonthday_minus_1_is_the_last_day_of_every_month() -> None:
    got = _first("FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=18;BYMINUTE=0", datetime(2023, 1, 1), 14)
    assert [moment.date().isoformat() for moment in got] == [
        "2023-01-31",
        "2023-02-28",
        "2023-03-31",
        "2023-04-30",
        "2023-05-31",
        "2023-06-30",
        "2023-07-31",
        "2023-08-31",
        "2023-09-30",
        "2023-10-31",
        "2023-11-30",
        "2023-12-31",
        "2024-01-31",
        "2024-02-29",
    ]
    assert {moment.time().isoformat() for moment in got} == {"18:00:00"}


def test_february_29_yearly_only_in_leap_years() -> None:
    rule = "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"
    got = _first(rule, datetime(2021, 1, 1, 7, 30), 3)
    assert got == _times("2024-02-29T07:30", "2028-02-29T07:30", "2032-02-29T07:30")
    # 2100 is not a leap year (divisible by 100, not by 400); 2400 is.
    assert _first(rule, datetime(2096, 3, 1), 2) == _times("2104-02-29", "2108-02-29")
    assert _first(rule, datetime(2397, 1, 1), 1) == _times("2400-02-29")


def test_byday_minus_1fr_is_the_last_friday_of_the_month() -> None:
    got = _first("FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=17;BYMINUTE=0", NEW_YEAR_2025, 4)
    assert got == _times(
        "2025-01-31T17:00", "2025-02-28T17:00", "2025-03-28T17:00", "2025-04-25T17:00"
    )


def test_byday_1mo_is_the_first_monday_of_the_month() -> None:
    got = _first("FREQ=MONTHLY;BYDAY=1MO", NEW_YEAR_2025, 4)
    assert got == _times(
        "2025-01-06T09:00", "2025-02-03T09:00", "2025-03-03T09:00", "2025-04-07T09:00"
    )


def test_us_thanksgiving_is_the_fourth_thursday_of_november() -> None:
    got = _first("FREQ=YEARLY;BYMONTH=11;BYDAY=4TH;BYHOUR=12;BYMINUTE=0", datetime(2023, 1, 1), 4)
    assert got == _times(
        "2023-11-23T12:00", "2024-11-28T12:00", "2025-11-27T12:00", "2026-11-26T12:00"
    )


def test_byday_ordinal_over_the_year_without_bymonth() -> None:
    # The 20th Monday of the year and the last Sunday of the year.
    got = _first("FREQ=YEARLY;BYDAY=20MO,-1SU", datetime(2025, 1, 1), 3)
    assert got == _times("2025-05-19", "2025-12-28", "2026-05-18")


# RFC 5545 §3.8.5.3: "An example where the days generated makes a difference because of WKST".
RFC_WKST_START = datetime(1997, 8, 5, 9, 0)


def test_wkst_mo_gives_the_rfc_set() -> None:
    got = _first("FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO", RFC_WKST_START, 10)
    assert got == _times(
        "1997-08-05T09:00", "1997-08-10T09:00", "1997-08-19T09:00", "1997-08-24T09:00"
    )


def test_wkst_su_gives_the_other_rfc_set() -> None:
    got = _first("FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU", RFC_WKST_START, 10)
    assert got == _times(
        "1997-08-05T09:00", "1997-08-17T09:00", "1997-08-19T09:00", "1997-08-31T09:00"
    )


def test_wkst_defaults_to_monday_whatever_the_process_calendar_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(calendar, "firstweekday", lambda: calendar.SUNDAY)
    got = _first("FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU", RFC_WKST_START, 10)
    assert got[1] == datetime(1997, 8, 10, 9, 0)


def test_wkst_still_applies_when_iteration_restarts_later() -> None:
    rule = "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,SU;WKST=SU"
    start = datetime(1998, 8, 1)
    expected = list(rrulestr(rule, dtstart=RFC_WKST_START).xafter(start, count=6, inc=True))
    assert _first(rule, RFC_WKST_START, 6, start) == expected


def test_dtstart_that_does_not_match_is_not_yielded() -> None:
    # Follows dateutil; RFC 5545 leaves this set undefined.
    got = _first("FREQ=MONTHLY;BYMONTHDAY=15;BYHOUR=9;BYMINUTE=0", datetime(2025, 1, 1, 8), 1)
    assert got == _times("2025-01-15T09:00")


def test_defaults_come_from_dtstart() -> None:
    assert _first("FREQ=MONTHLY", datetime(2025, 1, 31, 6, 45), 2) == _times(
        "2025-01-31T06:45", "2025-03-31T06:45"
    )
    assert _first("FREQ=WEEKLY", datetime(2025, 1, 1, 6, 45), 2) == _times(
        "2025-01-01T06:45", "2025-01-08T06:45"
    )


# COUNT, UNTIL, INTERVAL --------------------------------------------------------------


def test_count_is_counted_from_dtstart_even_when_start_is_later() -> None:
    schedule = RRuleSchedule.parse("FREQ=DAILY;COUNT=5", NEW_YEAR_2025)
    assert list(schedule.wall_times_from(datetime(2025, 1, 3, 12, 0))) == _times(
        "2025-01-04T09:00", "2025-01-05T09:00"
    )
    assert list(schedule.wall_times_from(datetime(2025, 1, 3, 9, 0))) == _times(
        "2025-01-03T09:00", "2025-01-04T09:00", "2025-01-05T09:00"
    )
    assert list(schedule.wall_times_from(datetime(2026, 1, 1))) == []


def test_count_counts_only_matching_times_when_dtstart_does_not_match() -> None:
    schedule = RRuleSchedule.parse("FREQ=MONTHLY;BYMONTHDAY=1;COUNT=2", datetime(2025, 1, 15))
    assert list(schedule.wall_times_from(datetime(2025, 1, 1))) == _times(
        "2025-02-01", "2025-03-01"
    )


def test_until_local_date_time_is_inclusive() -> None:
    schedule = RRuleSchedule.parse("FREQ=DAILY;UNTIL=20250103T090000", NEW_YEAR_2025)
    assert schedule.until == datetime(2025, 1, 3, 9, 0)
    assert list(schedule.wall_times_from(NEW_YEAR_2025)) == _times(
        "2025-01-01T09:00", "2025-01-02T09:00", "2025-01-03T09:00"
    )
    assert list(schedule.wall_times_from(datetime(2025, 1, 3, 9, 1))) == []


def test_until_date_covers_the_whole_day() -> None:
    schedule = RRuleSchedule.parse("FREQ=DAILY;UNTIL=20250103", datetime(2025, 1, 1, 23, 59))
    assert schedule.until == datetime(2025, 1, 3, 23, 59, 59)
    assert list(schedule.wall_times_from(datetime(2025, 1, 2))) == _times(
        "2025-01-02T23:59", "2025-01-03T23:59"
    )


def test_until_utc_is_an_instant_left_to_the_planner() -> None:
    schedule = RRuleSchedule.parse("FREQ=DAILY;UNTIL=20250103T080000Z", NEW_YEAR_2025)
    assert schedule.until == datetime(2025, 1, 3, 8, 0, tzinfo=UTC)
    # No time-zone logic here: the wall times go on; the planner compares instants.
    assert len(list(islice(schedule.wall_times_from(NEW_YEAR_2025), 5))) == 5


def test_until_is_none_when_absent() -> None:
    assert RRuleSchedule.parse("FREQ=DAILY", NEW_YEAR_2025).until is None


def test_until_before_dtstart_gives_nothing() -> None:
    schedule = RRuleSchedule.parse("FREQ=DAILY;UNTIL=20241231", NEW_YEAR_2025)
    assert list(schedule.wall_times_from(datetime(2024, 1, 1))) == []


def test_minutely_interval() -> None:
    rule = "FREQ=MINUTELY;INTERVAL=15"
    assert _first(rule, datetime(2025, 1, 1, 9, 7), 3) == _times(
        "2025-01-01T09:07", "2025-01-01T09:22", "2025-01-01T09:37"
    )
    later = _first(rule, datetime(2025, 1, 1, 9, 7), 2, start=datetime(2026, 6, 1, 10, 0))
    assert later == _times("2026-06-01T10:07", "2026-06-01T10:22")


def test_hourly_interval_keeps_its_phase_across_days() -> None:
    rule = "FREQ=HOURLY;INTERVAL=5"
    dtstart = datetime(2025, 1, 1, 20, 30)
    assert _first(rule, dtstart, 3) == _times(
        "2025-01-01T20:30", "2025-01-02T01:30", "2025-01-02T06:30"
    )
    # 2026-01-01 00:00 is 8739.5 hours after DTSTART; the next step of 5 is 8740 hours, 00:30.
    got = _first(rule, dtstart, 2, start=datetime(2026, 1, 1))
    assert got == _times("2026-01-01T00:30", "2026-01-01T05:30")


def test_hourly_interval_with_byhour() -> None:
    rule = "FREQ=HOURLY;INTERVAL=3;BYHOUR=9,12,13"
    # From 00:15 every 3 hours reaches 09:15 and 12:15 but never 13:15.
    got = _first(rule, datetime(2025, 1, 1, 0, 15), 3, start=datetime(2025, 3, 1))
    assert got == _times("2025-03-01T09:15", "2025-03-01T12:15", "2025-03-02T09:15")


def test_dtstart_is_truncated_to_the_minute() -> None:
    schedule = RRuleSchedule.parse("FREQ=DAILY", datetime(2025, 1, 1, 9, 30, 45, 123456))
    assert schedule.dtstart == datetime(2025, 1, 1, 9, 30)
    assert next(schedule.wall_times_from(datetime(2025, 1, 1))) == datetime(2025, 1, 1, 9, 30)


def test_start_between_minutes_gives_the_next_whole_minute() -> None:
    got = _first("FREQ=MINUTELY", NEW_YEAR_2025, 1, start=datetime(2025, 1, 1, 9, 0, 1))
    assert got == _times("2025-01-01T09:01")


# Spelling ------------------------------------------------------------------------------


def test_part_names_and_freq_byday_wkst_values_are_case_insensitive() -> None:
    lower = RRuleSchedule.parse("freq=weekly;interval=2;byday=tu,su;wkst=su", RFC_WKST_START)
    upper = RRuleSchedule.parse("FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,SU;WKST=SU", RFC_WKST_START)
    assert lower == upper
    assert str(lower) == "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,SU;WKST=SU"


def test_leading_rrule_prefix_is_accepted() -> None:
    assert RRuleSchedule.parse("RRULE:FREQ=DAILY", NEW_YEAR_2025) == RRuleSchedule.parse(
        "FREQ=DAILY", NEW_YEAR_2025
    )
    assert str(RRuleSchedule.parse("rrule:freq=daily", NEW_YEAR_2025)) == "FREQ=DAILY"


def test_str_is_canonical() -> None:
    # Parts in a fixed order, values sorted and deduplicated, defaults (INTERVAL=1) left out.
    schedule = RRuleSchedule.parse(
        "wkst=su;byminute=0;byhour=18,9,9;byday=+2tu,-1fr;bymonthday=-1,15;"
        "bymonth=12,1;until=20301231t235959z;interval=01;freq=monthly",
        NEW_YEAR_2025,
    )
    assert str(schedule) == (
        "FREQ=MONTHLY;UNTIL=20301231T235959Z;BYMONTH=1,12;BYMONTHDAY=-1,15;"
        "BYDAY=2TU,-1FR;BYHOUR=9,18;BYMINUTE=0;WKST=SU"
    )
    assert RRuleSchedule.parse(str(schedule), NEW_YEAR_2025) == schedule


def test_schedule_is_immutable_and_hashable() -> None:
    schedule = RRuleSchedule.parse("FREQ=DAILY", NEW_YEAR_2025)
    with pytest.raises(AttributeError):
        schedule._dtstart = datetime(2030, 1, 1)
    assert hash(schedule) == hash(RRuleSchedule.parse("FREQ=DAILY;INTERVAL=1", NEW_YEAR_2025))
    assert schedule != RRuleSchedule.parse("FREQ=DAILY", datetime(2025, 1, 2, 9, 0))


def test_copies_and_pickles_are_equal() -> None:
    schedule = RRuleSchedule.parse("FREQ=MONTHLY;BYDAY=-1FR;UNTIL=20300101", NEW_YEAR_2025)
    assert copy.deepcopy(schedule) == schedule
    assert pickle.loads(pickle.dumps(schedule)) == schedule


def test_aware_datetimes_are_a_programming_error() -> None:
    with pytest.raises(ValueError, match="dtstart must be a naive local wall time"):
        RRuleSchedule.parse("FREQ=DAILY", NEW_YEAR_2025.replace(tzinfo=UTC))
    schedule = RRuleSchedule.parse("FREQ=DAILY", NEW_YEAR_2025)
    with pytest.raises(ValueError, match="start must be a naive local wall time"):
        schedule.wall_times_from(NEW_YEAR_2025.replace(tzinfo=UTC))


# BYSETPOS ------------------------------------------------------------------------------


def test_bysetpos_picks_the_last_weekday_of_each_month() -> None:
    rule = "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=18;BYMINUTE=0"
    assert _first(rule, datetime(2026, 1, 1), 5) == _times(
        "2026-01-30T18:00", "2026-02-27T18:00", "2026-03-31T18:00", "2026-04-30T18:00",
        "2026-05-29T18:00",
    )  # fmt: skip


def test_bysetpos_counts_from_both_ends_within_each_period() -> None:
    # The first and the second-to-last working day of each month.
    rule = "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1,-2;BYHOUR=9;BYMINUTE=0"
    assert _first(rule, datetime(2026, 8, 1), 4) == _times(
        "2026-08-03T09:00", "2026-08-28T09:00", "2026-09-01T09:00", "2026-09-29T09:00"
    )


def test_bysetpos_is_counted_in_the_whole_period_even_before_dtstart() -> None:
    # DTSTART on Jan 15: the month's first working day (Jan 1) lies before it, so January
    # yields nothing rather than promoting a later day to "first".
    rule = "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1;BYHOUR=9;BYMINUTE=0"
    assert _first(rule, datetime(2026, 1, 15), 2) == _times("2026-02-02T09:00", "2026-03-02T09:00")


def test_bysetpos_keeps_its_place_in_the_written_rule() -> None:
    schedule = RRuleSchedule.parse("FREQ=MONTHLY;BYSETPOS=-1,1;BYDAY=SA,SU", NEW_YEAR_2025)
    assert str(schedule) == "FREQ=MONTHLY;BYDAY=SA,SU;BYSETPOS=-1,1"


# Errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            "FREQ=DAILY;BYSETPOS=1",
            "RRULE BYSETPOS: it picks among the times another BY part gives (for example "
            "BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1), and none is given",
        ),
        (
            "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=0",
            "RRULE BYSETPOS: 0 is not allowed (use 1..366 or -366..-1)",
        ),
        (
            "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=367",
            "RRULE BYSETPOS: 367 is out of range (use 1..366 or -366..-1)",
        ),
        ("FREQ=MONTHLY;BYDAY=MO;BYSETPOS=last", "RRULE BYSETPOS: 'last' is not a whole number"),
        ("FREQ=YEARLY;BYWEEKNO=20", "unsupported RRULE part BYWEEKNO"),
        ("FREQ=YEARLY;BYYEARDAY=100", "unsupported RRULE part BYYEARDAY"),
        ("FREQ=MINUTELY;BYSECOND=30", "unsupported RRULE part BYSECOND"),
        ("FREQ=DAILY;RDATE=20250105T090000", "unsupported RRULE part RDATE"),
        ("FREQ=DAILY;exdate=20250105T090000", "unsupported RRULE part EXDATE"),
        ("FREQ=DAILY;FOO=1", "unknown RRULE part FOO"),
        ("FREQ=DAILY;X-NAME=1", "unknown RRULE part X-NAME"),
        ("FREQ=MONTHLY;BYMONTHDAY=0", "RRULE BYMONTHDAY: 0 is not allowed (use 1..31 or -31..-1)"),
        (
            "FREQ=MONTHLY;BYMONTHDAY=-32",
            "RRULE BYMONTHDAY: -32 is out of range (use 1..31 or -31..-1)",
        ),
        ("FREQ=DAILY;BYHOUR=24", "RRULE BYHOUR: 24 is out of range 0-23"),
        ("FREQ=DAILY;BYHOUR=9,-1", "RRULE BYHOUR: -1 is out of range 0-23"),
        ("FREQ=DAILY;BYMINUTE=60", "RRULE BYMINUTE: 60 is out of range 0-59"),
        ("FREQ=YEARLY;BYMONTH=13", "RRULE BYMONTH: 13 is out of range 1-12"),
        ("FREQ=SECONDLY", "RRULE FREQ: SECONDLY is not supported (the smallest unit is a minute)"),
        ("freq=secondly", "RRULE FREQ: SECONDLY is not supported (the smallest unit is a minute)"),
        (
            "FREQ=FORTNIGHTLY",
            "RRULE FREQ: 'FORTNIGHTLY' is not one of MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, "
            "YEARLY",
        ),
        ("BYHOUR=9", "RRULE: FREQ is required"),
        ("FREQ=DAILY;COUNT=3;UNTIL=20250105", "RRULE: COUNT and UNTIL cannot both be given"),
        (
            "FREQ=WEEKLY;BYDAY=1MO",
            "RRULE BYDAY: ordinal 1MO is only allowed with FREQ=MONTHLY or YEARLY",
        ),
        (
            "FREQ=DAILY;BYDAY=-1fr",
            "RRULE BYDAY: ordinal -1FR is only allowed with FREQ=MONTHLY or YEARLY",
        ),
        (
            "FREQ=MONTHLY;BYDAY=6MO",
            "RRULE BYDAY: ordinal 6MO is out of range (use 1..5 or -5..-1 with FREQ=MONTHLY)",
        ),
        (
            "FREQ=MONTHLY;BYDAY=0MO",
            "RRULE BYDAY: ordinal 0 in 0MO is not allowed (use 1..5 or -5..-1 with FREQ=MONTHLY)",
        ),
        (
            "FREQ=YEARLY;BYDAY=-54SU",
            "RRULE BYDAY: ordinal -54SU is out of range (use 1..53 or -53..-1 with FREQ=YEARLY)",
        ),
        (
            "FREQ=YEARLY;BYMONTH=11;BYDAY=6TH",
            "RRULE BYDAY: ordinal 6TH is out of range "
            "(use 1..5 or -5..-1 with FREQ=YEARLY and BYMONTH)",
        ),
        (
            "FREQ=WEEKLY;BYDAY=MON",
            "RRULE BYDAY: 'MON' is not a weekday (MO, TU, WE, TH, FR, SA or SU, "
            "with an ordinal like 1MO or -1FR)",
        ),
        ("FREQ=WEEKLY;WKST=XX", "RRULE WKST: 'XX' is not a weekday (MO, TU, WE, TH, FR, SA, SU)"),
        ("FREQ=DAILY;INTERVAL=x", "RRULE INTERVAL: 'x' is not a whole number"),
        ("FREQ=DAILY;INTERVAL=1.5", "RRULE INTERVAL: '1.5' is not a whole number"),
        ("FREQ=DAILY;INTERVAL=0", "RRULE INTERVAL: 0 is out of range (it must be at least 1)"),
        ("FREQ=DAILY;COUNT=0", "RRULE COUNT: 0 is out of range (it must be at least 1)"),
        ("FREQ=DAILY;COUNT=" + "9" * 19, "RRULE COUNT: " + "9" * 19 + " is too large"),
        ("FREQ=DAILY;BYHOUR=9,,10", "RRULE BYHOUR: '' is not a whole number"),
        ("FREQ=DAILY;BYHOUR=", "RRULE BYHOUR: no value given"),
        ("FREQ=DAILY;FREQ=WEEKLY", "RRULE: FREQ is given twice"),
        ("FREQ=DAILY;byhour=9;BYHOUR=10", "RRULE: BYHOUR is given twice"),
        ("FREQ=DAILY;", "RRULE: empty part (a stray ';')"),
        ("FREQ=DAILY;BYHOUR", "RRULE: 'BYHOUR' is not a NAME=VALUE part"),
        ("", "RRULE: the rule is empty (expected something like FREQ=DAILY)"),
        ("   ", "RRULE: the rule is empty (expected something like FREQ=DAILY)"),
        ("RRULE:", "RRULE: the rule is empty (expected something like FREQ=DAILY)"),
        (
            "FREQ=DAILY;UNTIL=2025-01-05",
            "RRULE UNTIL: '2025-01-05' is not a date (YYYYMMDD) or a date-time "
            "(YYYYMMDDTHHMMSS local, or YYYYMMDDTHHMMSSZ in UTC)",
        ),
        ("FREQ=DAILY;UNTIL=20250230", "RRULE UNTIL: '20250230' is not a real date or time"),
        (
            "FREQ=DAILY;UNTIL=20250101T250000Z",
            "RRULE UNTIL: '20250101T250000Z' is not a real date or time",
        ),
    ],
)
def test_error_messages(rule: str, message: str) -> None:
    assert _error(rule) == message


@pytest.mark.parametrize(
    ("rule", "dtstart", "message"),
    [
        (
            "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30",
            NEW_YEAR_2025,
            "RRULE BYMONTHDAY: no month in BYMONTH=2 has day 30, "
            "so the rule would never produce a time",
        ),
        (
            "FREQ=DAILY;BYMONTH=4,6,9,11;BYMONTHDAY=31,-31",
            NEW_YEAR_2025,
            "RRULE BYMONTHDAY: no month in BYMONTH=4,6,9,11 has day -31,31, "
            "so the rule would never produce a time",
        ),
        (
            "FREQ=MONTHLY;BYMONTH=4,6",
            datetime(2025, 1, 31),
            "RRULE BYMONTHDAY: no month in BYMONTH=4,6 has day 31 (the day comes from DTSTART), "
            "so the rule would never produce a time",
        ),
        (
            "FREQ=HOURLY;INTERVAL=6;BYHOUR=1,2",
            datetime(2025, 1, 1, 0, 30),
            "RRULE: FREQ=HOURLY;INTERVAL=6 from WE 00:30 never reaches a time allowed by "
            "BYHOUR, so the rule would never produce a time",
        ),
        (
            "FREQ=MINUTELY;INTERVAL=120;BYHOUR=1",
            datetime(2025, 1, 1, 0, 0),
            "RRULE: FREQ=MINUTELY;INTERVAL=120 from WE 00:00 never reaches a time allowed by "
            "BYHOUR, so the rule would never produce a time",
        ),
        (
            "FREQ=MINUTELY;INTERVAL=10;BYMINUTE=5",
            datetime(2025, 1, 1, 0, 0),
            "RRULE: FREQ=MINUTELY;INTERVAL=10 from WE 00:00 never reaches a time allowed by "
            "BYMINUTE, so the rule would never produce a time",
        ),
        (
            "FREQ=DAILY;INTERVAL=14;BYDAY=TU,TH",
            datetime(2025, 1, 1, 9, 0),
            "RRULE: FREQ=DAILY;INTERVAL=14 from WE 09:00 never reaches a time allowed by "
            "BYDAY, so the rule would never produce a time",
        ),
        (
            # Steps of 7 hours tie the hour of day to the weekday: on Sundays only 02, 09,
            # 16 and 23 o'clock are reached from Wednesday midnight.
            "FREQ=HOURLY;INTERVAL=7;BYDAY=SU;BYHOUR=17",
            datetime(2025, 1, 1, 0, 0),
            "RRULE: FREQ=HOURLY;INTERVAL=7 from WE 00:00 never reaches a time allowed by "
            "BYDAY/BYHOUR, so the rule would never produce a time",
        ),
    ],
)
def test_rules_that_can_never_produce_a_time_are_refused(
    rule: str, dtstart: datetime, message: str
) -> None:
    assert _error(rule, dtstart) == message


def test_rules_that_only_sometimes_produce_a_time_are_accepted() -> None:
    # February has a 29th in leap years, and -29 of February is its 1st then.
    assert _first("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-29", datetime(2025, 1, 1), 1) == _times(
        "2028-02-01"
    )
    got = _first("FREQ=HOURLY;INTERVAL=7;BYDAY=SU;BYHOUR=16", datetime(2025, 1, 1), 2)
    assert got == _times("2025-01-05T16:00", "2025-01-12T16:00")
    # Every 100 minutes from 00:00 reaches hour 1 at 01:40, and at 01:00 the next day.
    got = _first("FREQ=MINUTELY;INTERVAL=100;BYHOUR=1", datetime(2025, 1, 1), 2)
    assert got == _times("2025-01-01T01:40", "2025-01-02T01:00")


# Restarting iteration later must not change the set --------------------------------------

_SPANS = {
    "MINUTELY": timedelta(minutes=1),
    "HOURLY": timedelta(hours=1),
    "DAILY": timedelta(days=1),
    "WEEKLY": timedelta(weeks=1),
    "MONTHLY": timedelta(days=31),
    "YEARLY": timedelta(days=366),
}


def _accepted(rule: str, dtstart: datetime) -> RRuleSchedule:
    """The rule parsed, or the example discarded: a drawn rule may never produce a time."""
    try:
        return RRuleSchedule.parse(rule, dtstart)
    except ScheduleError:
        assume(False)
        raise


@st.composite
def _rules(draw: st.DrawFn) -> str:
    freq = draw(st.sampled_from(sorted(_SPANS)))
    parts = [f"FREQ={freq}", f"INTERVAL={draw(st.integers(1, 7))}"]

    def maybe(name: str, values: st.SearchStrategy[str]) -> None:
        # Each part in about a third of the rules, so that most rules match often enough.
        chosen = draw(st.lists(values, min_size=1, max_size=3))
        if draw(st.integers(0, 2)) == 0:
            parts.append(f"{name}={','.join(chosen)}")

    weekday = st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"])
    ordinal = st.sampled_from(["", "1", "2", "-1", "+3", "-5", "5"])
    with_ordinal = st.tuples(ordinal, weekday).map("".join)
    day = with_ordinal if freq in ("MONTHLY", "YEARLY") else weekday
    maybe("BYMONTH", st.integers(1, 12).map(str))
    maybe("BYMONTHDAY", st.integers(-31, 31).filter(bool).map(str))
    maybe("BYDAY", day)
    maybe("BYHOUR", st.integers(0, 23).map(str))
    maybe("BYMINUTE", st.integers(0, 59).map(str))
    maybe("BYSETPOS", st.sampled_from(["1", "2", "-1", "-2", "3"]))
    parts.append(f"WKST={draw(weekday)}")
    return ";".join(parts)


@settings(max_examples=300, deadline=None)
@given(
    rule=_rules(),
    dtstart=st.datetimes(datetime(1990, 1, 1), datetime(2040, 1, 1)),
    periods=st.integers(0, 300),
    extra=st.floats(0, 1),
)
def test_restarting_later_gives_the_same_times_as_dateutil_from_dtstart(
    rule: str, dtstart: datetime, periods: int, extra: float
) -> None:
    schedule = _accepted(rule, dtstart)
    span = _SPANS[rule.split(";")[0].removeprefix("FREQ=")] * schedule._expansion.interval
    start = schedule.dtstart + span * (periods + extra)
    horizon = start + span * 40
    # The reference is dateutil itself, parsing the text and iterating from DTSTART.
    bounded = f"{rule};UNTIL={horizon:%Y%m%dT%H%M%S}"
    reference = rrulestr(bounded, dtstart=schedule.dtstart)
    restarted = schedule._rrule_for(start).replace(until=horizon)
    # dateutil checks UNTIL only against times that match, so a rule that is sparse (or
    # empty in ways parse cannot prove) would be searched up to the year 9999. Its search
    # limit is datetime.MAXYEAR, read at run time: lower it just past the horizon, for both.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(datetime_module, "MAXYEAR", horizon.year + 1)
        expected = list(reference.xafter(start, inc=True))
        assert list(restarted.xafter(start, inc=True)) == expected


# Rules that are sets of cron fields take the cron path --------------------------------


@st.composite
def _cron_shaped_rules(draw: st.DrawFn) -> str:
    """INTERVAL=1 and no COUNT, BYSETPOS, BYDAY ordinal or day counted from the month's end:
    the rules ``RRuleSchedule`` expands with cron's fields instead of dateutil."""
    parts = [f"FREQ={draw(st.sampled_from(sorted(_SPANS)))}"]

    def maybe(name: str, values: st.SearchStrategy[int] | st.SearchStrategy[str]) -> None:
        chosen = draw(st.lists(values, min_size=1, max_size=4))
        if draw(st.booleans()):
            parts.append(f"{name}={','.join(map(str, chosen))}")

    maybe("BYMONTH", st.integers(1, 12))
    maybe("BYMONTHDAY", st.integers(1, 31))
    maybe("BYDAY", st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"]))
    maybe("BYHOUR", st.integers(0, 23))
    maybe("BYMINUTE", st.integers(0, 59))
    if draw(st.booleans()):
        parts.append("INTERVAL=1")
    return ";".join(parts)


@settings(max_examples=400, deadline=None)
@given(
    rule=_cron_shaped_rules(),
    dtstart=st.datetimes(datetime(1990, 1, 1), datetime(2040, 1, 1)),
    later=st.timedeltas(timedelta(0), timedelta(days=3 * 366)),
    before=st.booleans(),
)
def test_rules_on_the_cron_path_give_dateutils_times(
    rule: str, dtstart: datetime, later: timedelta, before: bool
) -> None:
    schedule = _accepted(rule, dtstart)
    assert schedule._cron is not None
    start = schedule.dtstart - later if before else schedule.dtstart + later
    # The reference is dateutil itself, parsing the text and iterating from DTSTART; a rule
    # this sparse (BYMONTH=2;BYMONTHDAY=29;BYDAY=MO) may need decades for a few times.
    horizon = start + timedelta(days=366 * 60)
    reference = rrulestr(f"{rule};UNTIL={horizon:%Y%m%dT%H%M%S}", dtstart=schedule.dtstart)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(datetime_module, "MAXYEAR", horizon.year + 1)
        expected = list(islice(reference.xafter(start, inc=True), 12))
    got = list(islice(schedule.wall_times_from(start), len(expected)))
    assert got == expected


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=DAILY;INTERVAL=2",
        "FREQ=MONTHLY;COUNT=3",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
        "FREQ=MONTHLY;BYDAY=1MO",
        "FREQ=MONTHLY;BYMONTHDAY=-1",
    ],
)
def test_rules_that_are_not_sets_of_cron_fields_stay_with_dateutil(rule: str) -> None:
    assert RRuleSchedule.parse(rule, datetime(2026, 1, 1))._cron is None


_LOADS_DATEUTIL = """
import sys
from datetime import datetime
from itertools import islice
import coven_core.engine, coven_core.operator, coven_core.scheduling.scheduler
from coven_core.schedule.rrule import RRuleSchedule

def loaded():
    return "dateutil.rrule" in sys.modules

start = datetime(2025, 1, 1)
seen = [loaded()]
cron_like = RRuleSchedule.parse("FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=3;BYMINUTE=0", start)
seen += [next(cron_like.wall_times_from(start)).isoformat(), loaded()]
last_friday = RRuleSchedule.parse("FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=3;BYMINUTE=0", start)
seen += [next(last_friday.wall_times_from(start)).isoformat(), loaded()]
print(seen)
"""


def test_dateutil_is_loaded_only_by_the_first_rule_that_needs_it() -> None:
    """The engine imports no dateutil, a rule that is a set of cron fields never needs it,
    and the first rule that does loads it (bench_idle: the tray's start is smaller for it)."""
    done = subprocess.run([sys.executable, "-c", _LOADS_DATEUTIL], capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    assert done.stdout.strip() == str(
        [False, "2025-01-01T03:00:00", False, "2025-01-31T03:00:00", True]
    )
