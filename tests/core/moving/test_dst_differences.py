"""Where cron, systemd, launchd and Kubernetes differ from Coven at 2027's gaps and folds, in
three zones (core/moving/dst_differences.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from coven_core.moving.dst_differences import Scheduler, differences
from coven_core.schedule.timetable import Timetable

START = datetime(2027, 1, 1, tzinfo=UTC)
END = datetime(2028, 1, 1, tzinfo=UTC)
# zone → (gap day, fold day, a wall time in the gap, a wall time in the fold)
ZONES = {
    "America/New_York": ("2027-03-14", "2027-11-07", "02:30", "01:30"),
    "Europe/Berlin": ("2027-03-28", "2027-10-31", "02:30", "02:30"),
    "Australia/Sydney": ("2027-10-03", "2027-04-04", "02:30", "02:30"),
}


@pytest.mark.parametrize("zone", ZONES)
def test_the_transition_dates_are_what_zoneinfo_says(zone: str) -> None:
    gap_day, fold_day, gap_time, fold_time = ZONES[zone]
    gap = datetime.fromisoformat(f"{gap_day}T{gap_time}").replace(tzinfo=ZoneInfo(zone))
    assert gap.astimezone(UTC).astimezone(ZoneInfo(zone)).replace(tzinfo=None) != gap.replace(
        tzinfo=None
    )
    fold = datetime.fromisoformat(f"{fold_day}T{fold_time}")
    first, second = (fold.replace(tzinfo=ZoneInfo(zone), fold=f) for f in (0, 1))
    assert second.astimezone(UTC) - first.astimezone(UTC) == timedelta(hours=1)


def said(spec: str, zone: str, scheduler: Scheduler, wildcard: bool = False) -> list[str]:
    table = Timetable.build(spec, zone, START)
    return [d.sentence for d in differences(table, scheduler, START, END, wildcard=wildcard)]


@pytest.mark.parametrize("zone", ZONES)
def test_cron_runs_a_fixed_gap_time_after_the_change_and_a_wildcard_fold_time_twice(
    zone: str,
) -> None:
    gap_day, fold_day, gap_time, fold_time = ZONES[zone]
    offset = ZoneInfo(zone).utcoffset(datetime.fromisoformat(f"{fold_day}T{fold_time}"))
    assert offset is not None
    first = f"{'+' if offset >= timedelta(0) else '-'}{abs(offset) // timedelta(hours=1):02d}:00"
    fixed_gap = f"{gap_time[3:]} {gap_time[:2]} * * *"
    assert said(fixed_gap, zone, Scheduler.CRON) == [
        f"cron would run {gap_time} at 03:00 on {gap_day}; Coven skips it"
    ]
    fixed_fold = f"{fold_time[3:]} {fold_time[:2]} * * *"
    # cron avoids the second run too (in Berlin and Sydney 02:30 is also in the gap: not that)
    assert [s for s in said(fixed_fold, zone, Scheduler.CRON) if fold_day in s] == []
    hourly = f"{fold_time[3:]} * * * *"
    assert said(hourly, zone, Scheduler.CRON, wildcard=True) == [
        f"cron would run {fold_time} twice on {fold_day}; Coven runs it once, at the first {fold_time} ({first})"
    ]


@pytest.mark.parametrize("zone", ZONES)
def test_systemd_agrees_kubernetes_runs_a_fold_twice_launchd_is_said_unknown(zone: str) -> None:
    gap_day, fold_day, gap_time, fold_time = ZONES[zone]
    both = f"30 {gap_time[:2]},{fold_time[:2]} * * *"
    assert said(both, zone, Scheduler.SYSTEMD) == []
    (kubernetes,) = said(both, zone, Scheduler.KUBERNETES)
    assert kubernetes.startswith(
        f"Kubernetes would run {fold_time} twice on {fold_day}; Coven runs it once"
    )
    launchd = said(both, zone, Scheduler.LAUNCHD)
    assert (
        f"what launchd does at {gap_time} on {gap_day} is unknown (a nonexistent time); Coven skips it"
        in launchd
    )
    assert any(
        s.startswith(f"launchd has been reported to run {fold_time} twice on {fold_day}")
        for s in launchd
    )


def test_cron_treats_a_change_of_three_hours_or_more_as_a_clock_correction() -> None:
    # Pacific/Apia skipped 2011-12-30 (24 hours): no special handling, so a fixed time in the
    # lost day is not run by cron either — no difference.
    start, end = datetime(2011, 12, 1, tzinfo=UTC), datetime(2012, 1, 31, tzinfo=UTC)
    table = Timetable.build("30 12 * * *", "Pacific/Apia", start)
    assert differences(table, Scheduler.CRON, start, end) == ()


def test_interval_schedules_have_no_dst_differences() -> None:
    table = Timetable.build("every 30m", "America/New_York", START)
    assert differences(table, Scheduler.KUBERNETES, START, END) == ()
