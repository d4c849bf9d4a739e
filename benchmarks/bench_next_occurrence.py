"""Next-occurrence computation against cronsim, cold and warm (issue #2).

cold: build the schedule and compute one "next after now" — what the planner does for a
      routine it has not seen since the last start.
warm: 10,000 successive moments from one iterator — what preview and long replans do.

Both sides work in America/New_York with aware datetimes. Ours follows Coven's DST contract
(gaps skipped and reported, folds resolved to the first instant); cronsim shifts gap times
forward, which we must not, so the comparison is for speed only.

RRULE floor: dateutil's part of our cold RRULE alone — one ``dateutil.rrule.rrule`` built
      from the current month (as Coven restarts a rule near now) and its first moment after
      now taken (naive, no zone) — against cronsim's whole cold path. RRULE expansion is
      dateutil's job in Coven (README, "Choices"); when this floor is already slower than
      cronsim, a cold RRULE cannot reach 1.0× without replacing dateutil. Our own share
      (validation, normalising, the zone binding) is the rest.

Cold RRULE, the decision (issue #24): dateutil stays on the cold path. Where a cold RRULE's
time goes, timed part by part on 2026-12-06 (``timeit``, the monthly case): validating the
rule text 9 µs, defaults from DTSTART and the reachability checks 3 µs, the normalised text
3 µs, dateutil's ``rrule()`` 10 µs and its first time after now 8 µs, binding to the zone
(with the look back over a gap) 10 µs, the Timetable around them the rest: about 60 µs, of
which dateutil is 18. cronsim does all of its cold path in about 20 µs, so even dateutil
alone leaves 2–3 µs for validation and the zone: ≥ 1.0× needs an RRULE expansion of our own,
which "Choices" in the README declines (RFC 5545's corners are dateutil's well-tested work).
Caching the parsed rule would save its 12 µs of validation, not dateutil's construction, and
a cold build happens once per revision per process start (the scheduler keeps each
revision's timetable, ``RevisionCache``): 1,000 RRULE routines cost about 60 ms at start,
which the recovery row (``bench_recovery``) includes.

Run: python3 benchmarks/bench_next_occurrence.py [--rounds N] [--json PATH]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from cronsim import CronSim
from dateutil.rrule import MONTHLY, rrule

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    Figure,
    info_figure,
    print_table,
    side_by_side,
    speed_figure,
    write_json,
)
from coven_core.schedule.timetable import Timetable
from coven_core.tz import tzdb

ZONE = "America/New_York"
NOW = datetime(2026, 11, 29, 10, 17, 26, tzinfo=UTC)
WARM_COUNT = 10_000

#: (label, our spec, the equivalent cronsim expression)
CASES = [
    ("*/5 * * * *", "cron:*/5 * * * *", "*/5 * * * *"),
    ("30 2 * * *", "cron:30 2 * * *", "30 2 * * *"),
    ("monthly RRULE", "rrule:FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0", "0 9 1 * *"),
]


def cold_pair(spec: str, expr: str) -> tuple[object, object]:
    anchor = NOW - timedelta(days=365)  # a routine created a year ago
    local_now = NOW.astimezone(ZoneInfo(ZONE))

    def ours() -> object:
        return next(Timetable.build(spec, ZONE, anchor).moments_from(NOW))

    def theirs() -> object:
        return next(CronSim(expr, local_now))

    return ours, theirs


def warm_pair(spec: str, expr: str) -> tuple[object, object]:
    table = Timetable.build(spec, ZONE, NOW - timedelta(days=365))
    local_now = NOW.astimezone(ZoneInfo(ZONE))

    def ours() -> object:
        return list(itertools.islice(table.moments_from(NOW), WARM_COUNT))

    def theirs() -> object:
        return list(itertools.islice(CronSim(expr, local_now), WARM_COUNT))

    return ours, theirs


def dateutil_floor(rounds: int) -> Figure:
    """dateutil alone, cold, for the monthly RRULE case (see the module's docstring)."""
    local_now = NOW.astimezone(ZoneInfo(ZONE)).replace(tzinfo=None)
    # Started at the current period, as Coven restarts it: no walk through a year of months.
    start = local_now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)

    def floor() -> object:
        rule = rrule(MONTHLY, dtstart=start, bymonthday=1, byhour=9, byminute=0, bysecond=0)
        return next(rule.xafter(local_now, inc=True))

    def theirs() -> object:
        return next(CronSim("0 9 1 * *", NOW.astimezone(ZoneInfo(ZONE))))

    mine, base = side_by_side(floor, theirs, rounds=rounds, repeat=200)
    return info_figure(
        "  cold RRULE floor: dateutil alone",
        "µs",
        mine * 1e6,
        base * 1e6,
        base / mine,
        baseline_name="cronsim (best reachable with dateutil)",
    )


def run(rounds: int) -> list[Figure]:
    figures = []
    for label, spec, expr in CASES:
        ours, theirs = cold_pair(spec, expr)
        mine, base = side_by_side(ours, theirs, rounds=rounds, repeat=200)
        figures.append(speed_figure(f"next occurrence cold, {label}", mine, base, 1.0,
                                    baseline_name="cronsim"))  # fmt: skip
        ours, theirs = warm_pair(spec, expr)
        mine, base = side_by_side(ours, theirs, rounds=rounds, repeat=1)
        figures.append(
            speed_figure(f"next occurrence warm, per item of {WARM_COUNT:,}, {label}",
                         mine / WARM_COUNT, base / WARM_COUNT, 1.0, baseline_name="cronsim")
        )  # fmt: skip
        if spec.startswith("rrule:"):
            figures.insert(-1, dateutil_floor(rounds))
    return figures


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``benchmarks/suite.py``)."""
    print(f"tz database: {tzdb.active()}; zone {ZONE}")
    return run(5 if quick else 15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--json", type=Path, default=Path("benchmarks/results/next_occurrence.json")
    )
    args = parser.parse_args()
    print(f"tz database: {tzdb.active()}; zone {ZONE}; {args.rounds} interleaved rounds, medians")
    figures = run(args.rounds)
    print_table(figures, "cronsim")
    write_json(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
