"""Next-occurrence computation against cronsim, cold and warm (issue #2).

cold: build the schedule and compute one "next after now" — what the planner does for a
      routine it has not seen since the last start.
warm: 10,000 successive moments from one iterator — what preview and long replans do.

Both sides work in America/New_York with aware datetimes. Ours follows Coven's DST contract
(gaps skipped and reported, folds resolved to the first instant); cronsim shifts gap times
forward, which we must not, so the comparison is for speed only.

Cold RRULE (issue #24): a rule that steps through every period (INTERVAL=1) with no COUNT,
BYSETPOS, BYDAY ordinal or day counted from the month's end is a set of cron fields, and
``RRuleSchedule`` expands it with the cron expander; ``test_rrule.py`` checks it against
dateutil, which expands every other rule. Where the monthly case's time went before, timed
part by part (``timeit``): validating the rule text 9 µs, dateutil's ``rrule()`` 10 µs and its
first time after now 8 µs, normalising the text 3 µs, the zone and the Timetable the rest,
about 60 µs in all. Now dateutil's 18 µs are the cron expander's 3, the normalised text is
written only when asked (``Timetable.spec``), and the common case of each parsing step is
decided first. The info row "on dateutil's path" keeps the other rules' cold cost in view:
one with a BYDAY ordinal (the last Friday), against cronsim's ``5L``.

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


def dateutil_path(rounds: int) -> Figure:
    """A cold RRULE that stays with dateutil (a BYDAY ordinal), against cronsim's ``5L``."""
    ours, theirs = cold_pair("rrule:FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=9;BYMINUTE=0", "0 9 * * 5L")
    mine, base = side_by_side(ours, theirs, rounds=rounds, repeat=200)
    return info_figure(
        "  cold RRULE on dateutil's path, last Friday",
        "µs",
        mine * 1e6,
        base * 1e6,
        base / mine,
        baseline_name="cronsim",
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
            figures.insert(-1, dateutil_path(rounds))
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
