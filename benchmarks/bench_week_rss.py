"""The app's resident memory after a simulated week of runs with its main window open, against
its own at the start of that week (issue #24; goal: ≤ 1.1×, i.e. no leak).

The real app (``coven_desktop.desktop.Desktop``: the engine's scheduler on its thread, the
operator thread, the tray, the main window) on a store with 30 routines — 3 every five
minutes, 9 hourly, 18 daily at times spread over the day, in four zones — under a virtual
clock, on a qasync loop, commands ending the moment they start (no process). The main window
is open on the Routines page.

The week: the clock moves on in steps of five minutes (half an hour in the quick pass; the
scheduler's thread wakes at each of its deadlines on the way and runs its passes: about 7,700
runs in the week either way), and after each step the app catches up as it would on a real
week: the bridge's events, the tray's and the window's refreshes, the pages' reloads. Once a
simulated day the person looks at the Runs page and the Timeline, then goes back to the
Routines page.

RSS is read (``/proc/self/statm``) after a garbage collection, with nothing in flight: at the
start (the window shown, each page the week visits built once and loaded, back on Routines)
and after the week. ours = after the week, baseline = at the start, in the same process:
there is nothing to interleave. Info rows: the RSS after the first simulated day (caches
warmed, the store grown), the growth over the six days after it (what a leak would look
like), and the widgets alive at the end against the start.

Run: python3 benchmarks/bench_week_rss.py [--days N] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtWidgets import QApplication

from benchmarks.harness import Figure, cost_figure, info_figure, print_table, scratch, write_json
from benchmarks.virtual_desktop import ZONES, make_store, running_desktop
from coven_core.clock import VirtualClock
from coven_core.engine import Engine
from coven_core.model import RevisionSpec
from coven_desktop.desktop import Desktop

START = datetime(2026, 3, 16, 0, 0, tzinfo=UTC)  # a Monday
STEP = timedelta(minutes=5)  # the clock moves on by this much, then the app catches up
QUICK_STEP = timedelta(minutes=30)  # the quick pass: the same runs, fewer catch-ups
TARGET = 1.1
VISITED = ("runs", "timeline", "routines")  # the pages looked at once a day, in this order
MIB = 2**20


def routines() -> list[tuple[str, RevisionSpec]]:
    """3 every five minutes, 9 hourly, 18 daily at spread times, in four zones."""
    schedules = ["*/5 * * * *"] * 3 + [f"{7 * n % 60} * * * *" for n in range(9)]
    schedules += [f"{11 * n % 60} {5 * n % 24} * * *" for n in range(18)]
    return [(f"week-{n:02d}", RevisionSpec(schedule, ZONES[n % len(ZONES)], ("/bin/true",)))
            for n, schedule in enumerate(schedules)]  # fmt: skip


def rss() -> float:
    """Resident memory in bytes, after a collection (what is garbage is not counted)."""
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@dataclass
class Week:
    start: float = 0.0  # RSS, bytes
    days: list[float] = field(default_factory=list)  # RSS at the end of each day
    widgets: tuple[int, int] = (0, 0)  # alive at the start, at the end
    runs: int = 0


async def quiet(desktop: Desktop) -> None:
    """Until nothing is in flight: the bridge's reads, the refreshes, the pages' loads."""
    for _ in range(3):  # a refresh's news may start one more page reload
        await desktop.service.settle()
        await desktop.settle()
        await desktop.window.settle()
        for page in desktop.window.pages.values():
            settle = getattr(page, "settle", None)  # a page that loads in tasks of its own
            if settle is not None:
                await settle()
        await asyncio.sleep(0)


async def a_day(desktop: Desktop, clock: VirtualClock, step: timedelta) -> None:
    """A simulated day: the clock moves on step by step, the app catching up after each;
    then the person's look at the other pages and back."""
    end = clock.now_utc() + timedelta(days=1)
    while clock.now_utc() < end:
        clock.advance(step)
        await quiet(desktop)
    for page in VISITED:
        desktop.show_window(page)
        await quiet(desktop)


async def simulate(desktop: Desktop, clock: VirtualClock, days: int, step: timedelta) -> Week:
    for page in VISITED:  # every page the week shows is built before the start is read
        desktop.show_window(page)
        await quiet(desktop)
    week = Week(start=rss())
    widgets = len(QApplication.allWidgets())
    for _ in range(days):
        await a_day(desktop, clock, step)
        week.days.append(rss())
    week.widgets = (widgets, len(QApplication.allWidgets()))
    week.runs = await count_runs(desktop)
    return week


async def count_runs(desktop: Desktop) -> int:
    def settled(engine: Engine) -> int:
        query = "SELECT count(*) FROM attempts WHERE state = 'settled'"
        return int(engine.store.conn.execute(query).fetchone()[0])  # type: ignore[index]

    return await desktop.service.call(settled)


def measure(days: int, step: timedelta = STEP) -> tuple[Week, list[Figure]]:
    with scratch("week-rss-") as directory:
        data = directory / "data"
        make_store(data, routines(), START - timedelta(minutes=1), START)
        clock = VirtualClock(START, autojump=False)
        with running_desktop(data, clock) as (desktop, loop):
            desktop.locale = "en_US"
            week = loop.run_until_complete(simulate(desktop, clock, days, step))
    return week, figures_of(week, days, step)


def figures_of(week: Week, days: int, step: timedelta) -> list[Figure]:
    start, first, last = week.start / MIB, week.days[0] / MIB, week.days[-1] / MIB
    return [
        cost_figure("RSS after a simulated week, main window open", "MiB", last, start, TARGET,
                    baseline_name="its RSS at the start",
                    note=f"{days} simulated days, {week.runs:,} runs of 30 routines; the clock "
                    f"moved {step} at a time"),
        info_figure("  RSS after the first day", "MiB", first, start, first / start,
                    baseline_name="its RSS at the start"),
        info_figure(f"  RSS after day {days}, against after the first", "MiB", last, first,
                    last / first, baseline_name="its RSS after the first day"),
        info_figure("  widgets alive at the end", "", week.widgets[1], week.widgets[0],
                    week.widgets[1] / week.widgets[0], baseline_name="at the start"),
    ]  # fmt: skip


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``python -m benchmarks``): a week either way; the quick pass
    lets the app catch up every half hour instead of every five minutes."""
    return measure(7, QUICK_STEP if quick else STEP)[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--step-minutes", type=float, default=STEP.total_seconds() / 60)
    parser.add_argument("--json", type=Path, default=Path("build/bench/week_rss.json"))
    args = parser.parse_args()
    week, table = measure(args.days, timedelta(minutes=args.step_minutes))
    print_table(table, "start")
    print("RSS at the end of each day (MiB):", ", ".join(f"{d / MIB:.1f}" for d in week.days))
    write_json(table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
