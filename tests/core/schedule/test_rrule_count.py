"""RRULE COUNT across a daylight-saving gap, against RFC 5545's own words (issue 19, part 3).

RFC 5545 §3.3.10 (Recurrence Rule): "Recurrence rules may generate recurrence instances with
an invalid date (e.g., February 30) or nonexistent local time (e.g., 1:30 AM on a day where
the local time is moved forward by an hour at 1:00 AM). Such recurrence instances MUST be
ignored and MUST NOT be counted as part of the recurrence set."

So ``FREQ=DAILY;COUNT=3`` at 02:30 from the day before a spring-forward gap runs on three
real days. Coven still lists the nonexistent 02:30 as skipped (``nonexistent_local_time``):
saying why nothing ran that day is worth a row, but the row is no part of the count. Preview
and the planner read the same timetable, and a test below checks that they agree.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from coven_core.cli.main import main
from coven_core.model import RevisionSpec
from coven_core.schedule.timetable import Timetable
from tests.core.conftest import Engine

RULE = "rrule:FREQ=DAILY;COUNT=3"

# (zone, DTSTART as a UTC instant: 02:30 local the day before the gap, the days it runs,
# the day whose 02:30 does not exist)
GAPS = [
    pytest.param("America/New_York", datetime(2026, 3, 7, 7, 30, tzinfo=UTC),
                 ["03-07", "03-09", "03-10"], "03-08", id="new-york"),
    pytest.param("Europe/Berlin", datetime(2026, 3, 28, 1, 30, tzinfo=UTC),
                 ["03-28", "03-30", "03-31"], "03-29", id="berlin"),
]  # fmt: skip


def days(moments: list[tuple[str, bool]], *, skipped: bool) -> list[str]:
    return [day for day, was_skipped in moments if was_skipped is skipped]


@pytest.mark.parametrize(("zone", "dtstart", "runs", "gap"), GAPS)
def test_a_nonexistent_time_is_listed_but_not_counted(
    zone: str, dtstart: datetime, runs: list[str], gap: str
) -> None:
    table = Timetable.build(RULE, zone, dtstart)
    moments = [(f"{m.local:%m-%d}", m.skipped) for m in table.moments_from(dtstart)]
    assert days(moments, skipped=False) == runs  # COUNT=3: three instances that exist
    assert days(moments, skipped=True) == [gap]  # listed, with its reason, not counted
    assert moments == sorted(moments)


@pytest.mark.parametrize(("zone", "dtstart", "runs", "gap"), GAPS)
def test_counting_holds_from_any_later_start(
    zone: str, dtstart: datetime, runs: list[str], gap: str
) -> None:
    """COUNT is counted from DTSTART, wherever a reader starts (the planner resumes later)."""
    table = Timetable.build(RULE, zone, dtstart)
    later = dtstart + timedelta(days=1, hours=12)  # after the gap's day began
    assert [f"{m.local:%m-%d}" for m in table.moments_from(later)] == runs[1:]


def test_an_invalid_date_is_not_counted_either() -> None:
    """The RFC's other example: BYMONTHDAY=30 has no February; COUNT=3 still means three."""
    table = Timetable.build("rrule:FREQ=MONTHLY;BYMONTHDAY=30;COUNT=3", "UTC",
                            datetime(2026, 1, 1, tzinfo=UTC))  # fmt: skip
    moments = list(table.moments_from(datetime(2026, 1, 1, tzinfo=UTC)))
    assert [f"{m.local:%m-%d}" for m in moments] == ["01-30", "03-30", "04-30"]


@pytest.mark.parametrize(("zone", "dtstart", "runs", "gap"), GAPS)
def test_preview_and_planning_agree(
    capsys: pytest.CaptureFixture[str], engine: Engine, zone: str, dtstart: datetime,
    runs: list[str], gap: str,
) -> None:  # fmt: skip
    start = dtstart.isoformat()
    assert main(["preview", "--schedule", RULE, "--tz", zone, "--from", start,
                 "--start", start, "--json"]) == 0  # fmt: skip
    previewed = [
        (row["local"][5:10], row["disposition"])
        for row in json.loads(capsys.readouterr().out)["occurrences"]
    ]
    assert previewed == sorted([(day, "planned") for day in runs] + [(gap, "skipped")])
    engine.clock.advance_to(dtstart - timedelta(minutes=5))
    spec = RevisionSpec(schedule=RULE, timezone=zone, argv=("/bin/true",))
    rid = engine.operator.add_routine("counted", spec, dtstart)
    engine.run_until(dtstart + timedelta(days=10))
    planned = [
        (f"{datetime.fromisoformat(utc).astimezone(ZoneInfo(zone)):%m-%d}", disposition, reason)
        for utc, _kind, _state, disposition, reason, _count, _cause in engine.history(rid)
    ]
    assert planned == sorted(
        [(day, "succeeded", None) for day in runs] + [(gap, "skipped", "nonexistent_local_time")]
    )
