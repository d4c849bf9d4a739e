"""Recovery after a month switched off, 1,000 routines, against an ordinary start of the same
store, in one run (issue #24).

The store: 1,000 routines in UTC, half daily at 09:00, 30 % hourly, 15 % every quarter hour,
5 % every five minutes (mixed, see :data:`MIX`), so that every one of them has a moment at
09:00. It is made at 08:56 on 1 March 2026 and its scheduler passes once, at 08:59 (nothing
is due yet), then stops: switched off.

ours:     the store opened a month later, at 09:00:05 on 31 March: its passes decide every
          routine's month of missed moments, 256 routines a pass (under the default
          ``latest_only``, each routine's missed moments fold into one coalesced window, and
          the latest of them runs once).
baseline: the same store opened at 09:00:05 on 1 March: nothing was missed, every routine has
          one moment due. The same 1,000 commands start, so the difference is what recovering
          a month costs: the store's plain open and its one pass, and the queue they fill.

Each side times, in real time, from the store's open to the first command started ("first
dispatch": what a person sees first) and to a settled queue (every command started and
settled, nothing due). The scheduler is the real one, on a real store in a fresh copy each
round (WAL, synchronous=FULL, on disk), its passes driven in a loop under a virtual clock that
stays at the instant of the open, with a runtime whose commands end at once (no process:
what is measured is the engine's work, not ``/bin/true``). Interleaved A B A B, medians.

Targets (cost, ours / baseline): ≤ 2× for both, as the issue's other time rows. A month
adds to the same 1,000 starts and settlements one coalesced window and its events per
routine, and what a person sees first after switching the computer on after a month should
come about as soon as on any morning: the month's bookkeeping need not come before the first
command that is due. The planner counts a month of missed moments instead of walking them
(``coven_core.schedule.tally``: cron by its matching days, an interval by arithmetic; RRULE
schedules, and moments near a DST change or an excluded date, are still walked one by one),
so what is left of the month is one coalesced row and its event per routine; the first
dispatch still comes after the first pass has decided its 256 routines, windows included.
Before that,
97 % of the recovery was the planner walking and binding every missed moment, about 110,000
for 100 routines.

Run: python3 benchmarks/bench_recovery.py [--rounds N] [--routines N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import Figure, cost_figure, interleaved, print_table, scratch, write_json
from coven_core.clock import VirtualClock, WakeSignal
from coven_core.model import RevisionSpec
from coven_core.operator import Operator
from coven_core.runtime.base import Launch, Started
from coven_core.runtime.instant import InstantRuntime
from coven_core.scheduling.scheduler import Scheduler
from coven_core.store.store import Store

MADE = datetime(2026, 3, 1, 8, 56, tzinfo=UTC)  # after every moment before 09:00
SWITCHED_OFF = datetime(2026, 3, 1, 8, 59, tzinfo=UTC)
ORDINARY = datetime(2026, 3, 1, 9, 0, 5, tzinfo=UTC)  # the baseline's open: one moment due
A_MONTH_LATER = ORDINARY + timedelta(days=30)  # ours: a month of moments missed
#: Every 20 routines: 10 daily, 6 hourly, 3 every quarter hour, 1 every five minutes, each
#: with a moment at 09:00 UTC. Mixed in this order, not in blocks: a pass plans the routines
#: due first (256 at most), and every batch should hold the same mix.
MIX = (
    ("0 9 * * *", "0 * * * *") * 6
    + ("*/15 * * * *", "0 9 * * *") * 3
    + ("*/5 * * * *", "0 9 * * *")
)
ROUTINES = 1000
TARGET = 2.0


def make_store(data_dir: Path, routines: int) -> None:
    """The routines, one pass at 08:59, then switched off."""
    clock, wake = VirtualClock(MADE), WakeSignal()
    store = Store.open(data_dir, MADE)
    operator = Operator(store, clock, wake.set)
    for index in range(routines):
        spec = RevisionSpec(MIX[index % len(MIX)], "UTC", ("/bin/true",))
        operator.add_routine(f"recover-{index:04d}", spec)
    clock.advance_to(SWITCHED_OFF)
    scheduler = Scheduler(store, clock, InstantRuntime(clock, wake), wake)
    scheduler.pass_once("startup")
    scheduler.shutdown()
    store.close()


class FirstStart(InstantRuntime):
    """An instant runtime that notes when the first command started (perf_counter)."""

    first: float | None = None

    def start(self, launch: Launch) -> Started:
        if self.first is None:
            self.first = time.perf_counter()
        return super().start(launch)


@dataclass(frozen=True)
class Start:
    first_dispatch: float  # seconds from the open
    settled: float
    started: int  # commands started


def start(data_dir: Path, at: datetime) -> Start:
    """Open the store at ``at`` and run its passes until the queue is settled."""
    clock, wake = VirtualClock(at), WakeSignal()
    began = time.perf_counter()
    store = Store.open(data_dir, at)
    runtime = FirstStart(clock, wake)
    scheduler = Scheduler(store, clock, runtime, wake)
    scheduler.pass_once("startup")
    while (reason := wake.take()) is not None:  # a command ended: the next pass settles it
        scheduler.pass_once(reason.value)
    settled = time.perf_counter() - began
    scheduler.shutdown()
    store.close()
    assert runtime.first is not None, "nothing was dispatched"
    return Start(runtime.first - began, settled, len(runtime.launches))


def fresh_copy(pristine: Path, directory: Path, name: str) -> Path:
    """A copy of the switched-off store for one round (the copy is not timed)."""
    copy = directory / name
    shutil.copytree(pristine, copy)
    return copy


def measure(rounds: int, routines: int = ROUTINES) -> list[Figure]:
    with scratch("recovery-") as directory:
        pristine = directory / "switched-off"
        make_store(pristine, routines)
        counter = iter(range(10**6))
        ours: list[Start] = []
        theirs: list[Start] = []

        def side(at: datetime, samples: list[Start]) -> float:
            samples.append(start(fresh_copy(pristine, directory, f"r{next(counter)}"), at))
            return samples[-1].settled

        interleaved(lambda: side(A_MONTH_LATER, ours), lambda: side(ORDINARY, theirs),
                    rounds=rounds)  # fmt: skip
    ours, theirs = ours[1:], theirs[1:]  # the first of each warmed up (imports, caches)
    assert {s.started for s in ours} == {s.started for s in theirs} == {routines}
    return figures_of(ours, theirs, routines)


def figures_of(ours: list[Start], theirs: list[Start], routines: int) -> list[Figure]:
    def median_ms(samples: list[Start], what: str) -> float:
        return float(statistics.median(getattr(s, what) for s in samples)) * 1e3

    baseline = "the same store opened with nothing missed"
    note = f"{routines:,} routines, {len(ours)} rounds; a runtime whose commands end at once"
    return [
        cost_figure("recovery after a month off: start to first dispatch", "ms",
                    median_ms(ours, "first_dispatch"), median_ms(theirs, "first_dispatch"),
                    TARGET, baseline_name=baseline, note=note),
        cost_figure("recovery after a month off: start to a settled queue", "ms",
                    median_ms(ours, "settled"), median_ms(theirs, "settled"), TARGET,
                    baseline_name=baseline),
    ]  # fmt: skip


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``python -m benchmarks``)."""
    return measure(3 if quick else 7)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--routines", type=int, default=ROUTINES)
    parser.add_argument("--json", type=Path, default=Path("build/bench/recovery.json"))
    args = parser.parse_args()
    table = measure(args.rounds, args.routines)
    print_table(table, "no gap")
    write_json(table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
