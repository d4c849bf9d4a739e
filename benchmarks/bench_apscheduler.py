"""Coven against APScheduler 3, the scheduler a Python user would pick instead (issue #9).

Both sides run ``/bin/true`` for 1,000 routines (jobs), with the same concurrency (4 commands
at once: our default ``Limits.max_active``; APScheduler's ``ThreadPoolExecutor(4)``), the same
store settings where they compare (SQLite in WAL mode with synchronous=FULL: ours by default,
APScheduler's ``SQLAlchemyJobStore`` set so by a connect hook), no misfire limit on either
(ours: no grace by default; APScheduler: ``misfire_grace_time=None``, ``coalesce=False``).

ours:     the real engine — :class:`~coven_core.scheduling.scheduler.Scheduler` with the runner
runtime
          (fork server, runner process per attempt, fsync'd journal, §8) on a real store in a
          temp dir, the loop on its own thread as in ``coven daemon``.
baseline: APScheduler 3 ``BackgroundScheduler`` with ``SQLAlchemyJobStore`` on a SQLite file
          in the same temp dir, each job ``subprocess.run(["/bin/true"], check=True)``.

drain:    1,000 routines due at one instant → the last one settled. Ours: ``once`` routines
          at a whole minute on a shifted real clock; the engine sleeps until it. APScheduler:
          started paused with its 1,000 date jobs stored (run date just passed); the clock
          starts at ``resume()``, which wakes its loop as its own deadline would. Ratio: our
          time / its time, goal ≤ 1.0 (we are faster).
drain floor: the least durable work DESIGN §8 asks per attempt (``bench_dispatch.floor``:
          a commit for the decision, the journal's first records written before
          ``subprocess.run``, its name and ``exited`` fsync'd (and the outputs, when not
          empty), a commit for the settlement) for the 1,000 routines,
          4 at a time on threads, no runner process and no output delivery: what any
          scheduler keeping these promises pays here. APScheduler keeps none of them (it
          commits the job's next run time, and a crash mid-run leaves no trace of the run).
start lag p99 at 20 due/s: 1,000 routines, 20 due every second, steady (each repeats every
          50 s, the groups staggered a second apart): scheduled instant → the command's start
          (ours: the runner journal's ``spawned`` record; APScheduler: the job function's first
          line, just before ``subprocess.run``), p99 over a measured window after a warm-up.
          Coven's schedules have a resolution of one minute, so our side runs on a clock 60×
          faster than real time (engine minutes are real seconds; every engine timer scales
          alike, the first retention sweep is moved out of the window); every lag is measured
          in real time on both sides. Goal: our p99 / its p99 ≤ 1.0.
start lag floor: the drain floor's attempts at the same steady 20 due/s (each second's group
          queued for 4 threads), measured in the same run after APScheduler's: scheduled
          instant → just before ``subprocess.run``, after the decision's commit and the
          journal's ``intent`` (written; made durable with the exit). Its p99 is the least
          lag a scheduler keeping §8's promises has here, one slot finishing its attempt
          (spawn, fsyncs, settlement commit) before it takes the next.
runner floors: each floor again with the runner work done out of the scheduler's process,
          as §8 asks (``benchmarks.runner_floor``), in two designs: ``forked`` — a tiny
          fork server forks a runner per attempt, which journals, spawns and waits, and
          nothing else (ours until issue #24); ``pooled``, ours since — a long-lived runner
          per slot (a pool sized to the concurrency) doing one attempt after another.
          The lag ends at the runner's spawn.
grouped floor: each floor again with group commit, the other design issue #24 names
          (``benchmarks.group_floor``): the same durable steps, but the slots share one
          journal and one store, and slots waiting at the same moment share one fsync or one
          commit. Done in the slots' threads, it is the least a design with group commit pays.
supervised floor: group commit as §8 would allow it (``benchmarks.supervisor_floor``): one
          long-lived process of its own session runs every slot's attempts, a thread each,
          with one group-committed journal; the slots' commits grouped as above.
          (All floors are in ``benchmarks.floors``.)

Where our start lag goes (issue #9, measured 2026-12-02 on this 2-core machine). Each second's
burst of 20 is CPU-bound, not bound by any wait: the attempts cost 13–15 ms of CPU each in
all (``perf record``, by process: the scheduler's thread ~3.4 ms, the fork server ~1.9 ms,
the runner ~7 ms, ``/bin/true`` ~1 ms), so 20 of them on 2 cores take 135–150 ms before
anything waits; APScheduler's whole p99 is 48–63 ms (its 400-job drain: 1.9 s of CPU in all,
start-up included). A runner forked from the fork server's image costs 9–10 ms of CPU
(``wait4``'s rusage); a child that does nothing but exit costs 1.6–2.5 ms, one that only
starts ``/bin/true`` by ``posix_spawn`` and waits for it 3.9 ms. Of the runner's CPU, a third
is page faults (copy-on-write: a forked CPython writes the reference count of every object it
touches), a third is Python, the fsyncs 6 %. Changes that shortened the pass thread's wall
time without cutting CPU measured nothing: deliveries on a thread beside the starts (p99
207/205/230 ms against 203/224/222 ms, interleaved), or deferred while occurrences wait for a
slot (221/245/230 against 220/225/259 ms). Cutting fsyncs (the runner's eight to four) and
page faults (the fork server freezes its objects) gave ~5 %. The runner floor's p99 was
1.75× APScheduler's in the run that first measured it (101.9 ms against 58.1 ms; ours 219.9 ms,
2.16× that floor): ≤ 1.0× is out of reach for a design with a runner process per attempt here,
and even the floor without one was 1.05–1.19× in every run.

Which design (issue #24, measured 2026-12-06 on this machine, ``--quick``, soak paused): the
drain floors were 2.3× APScheduler inline, 5.4× with a forked runner per attempt and 3.5×
with a pooled runner per slot; the start lag floors 1.8×, 2.0× and 1.6×. A pool would take
about a third off the drain's floor, and no design reaches 1.0×: with every fsync and
synchronous commit taken out of the inline floor (not durable; a side measurement), its
drain came to 0.51–0.66 s against APScheduler's 0.50–0.54 s. What §8 and §9 promise per
attempt — the decision and the settlement committed, the intent durable before the spawn,
the exit durable before the settlement — costs more than APScheduler's whole job here.

Group commit (issue #24, measured 2026-12-06, ``make bench-quick`` on an idle machine): the
grouped floor drained in 1.07 s against the inline floor's 1.00 s (APScheduler 0.59 s), and
its start lag p99 was 24.2 ms against 28.5 ms (APScheduler 19.8 ms). With four slots, a
flush took 1.5 items on average (counted in a side run): few attempts wait at the same
moment, and a slot arriving during a flush waits for that one and the next. It shaves the
lag, not the drain, and the floor stays above APScheduler either way.

Where the drain's passes went (issue #24, measured 2026-12-06, each step of ``ours_drain``
wrapped in a timer): 258 passes of 31 ms median, each settling and starting about four
attempts, one after the other: the drain is its passes end to end. Of a pass, the four starts
took 13 ms (preparing the attempt directory 1.4 ms each, the fork server's reply 1.1 ms) and
the four deliveries 9.5 ms: /bin/true prints nothing, and every success still delivered its
empty output (a temp write, two fsyncs, a rename). A success that printed nothing now has
nothing to deliver; the same probe gave 516 passes of 11 ms median. Side by side, the engine
before and after, four interleaved rounds (``ours_drain`` and ``ours_lags`` alone, 8 s
window): drain 6.8/7.5/7.9/8.0 s against 6.3/7.0/6.1/6.4 s, start lag p99 204/195/179/189 ms
against 162/149/159/154 ms. The file work left on the pass (a directory and a file created
per start) is CPU in the kernel here (``mkdir`` 0.1–0.6 ms), not waiting: the burst stays
CPU-bound on two cores, as above.

Pooled runners (issue #24, measured 2026-12-07, ``make bench`` on an idle machine): the
runner per attempt gave way to a pooled runner per slot (DESIGN §8). The drain went from
6.70× APScheduler to 3.15× (1.92 s against 0.61 s; that run's forked floor alone was 1.93 s,
the pooled floor 1.03 s), the start lag p99 from 4.11× to 2.05× (47.7 ms against 23.2 ms;
pooled floor 24.1 ms). The burst stopped being CPU-bound: profiled, the scheduler's thread is
busy for the whole drain (passes of 3–4 ms, about two attempts each) while the runners use
the other core. On this machine's disk a file's creation came to take 0.4–0.9 ms (it was
0.05 ms earlier the same day), and a start made two (the attempt's directory and its
``spec.json``) on the scheduler's thread: a pooled runner now makes the directory and gets
the spec over its socket. Interleaved drains (``ours_drain`` alone, the commit before and
after), six pairs: medians 4.39 s against 3.60 s, faster in five. Tried and not kept:
recording a pass's starts in the next pass's first transaction when a wake was already
waiting (one commit fewer per pass; 70 % of the passes took it) measured nothing (medians
4.17 s against 4.49 s, four rounds).

Output files made with their first byte (issue #24, measured 2026-12-07): a runner made the
attempt's ``stdout`` and ``stderr`` before every spawn, and making a file took ~0.8 ms on this
disk that day (a directory ~0.8–1.1 ms, two creations ~2.2 ms; fsync of a file and its
folder ~0.5 ms). Timed per step in the drain, a slot spent as long between attempts (the
exit's fsync, the scheduler's settle-and-claim pass) as in its runner, and the runner's start
to ``intent`` was its slowest step. Now a file is made when the command first writes. The
floors make only what ours makes. Interleaved drains (``ours_drain`` alone, the commit
before and after), six pairs: medians 3.14 s against 2.60 s, faster in five.
Tried and not kept: the scheduler's second commit of a pass (the starts' record) without
waiting for the disk (``synchronous=NORMAL``: a lost record reads as a crash just after the
start, which recovery settles from the journal). Six interleaved pairs: medians 3.45 s
without it against 3.50 s with it; eight more after the change above: 2.47 s against 2.39 s,
the version without it faster in six. Nothing measured. Nor did journaling ``spawned``
without its own fsync (a crash of the runner keeps it in the page cache; a power cut ends the
command too): eight interleaved pairs, 2.54 s with the fsync against 2.66 s without. The
drain is mostly CPU now (the scheduler's thread ~1.1 ms an attempt, ~0.7 ms of it SQLite's
statements; a pooled runner ~1.4 ms and ``/bin/true`` ~0.6 ms, by thread and process CPU
time), so an fsync less per pass or per attempt does not show.

A supervisor with a group-committed journal (issue #24, measured 2026-12-07 on an idle
machine, the floors alone, two rounds each): the drain of 1,000 took 1.15 and 1.28 s against
the pooled runners' 1.06 and 1.10 s (grouped, no runner process: 0.90 and 0.92 s); the lag
p99 at 20 due/s 26.6 and 33.9 ms against 22.6 and 22.5 ms (grouped 22.0 and 23.8 ms). One
process for every slot puts the slots' Python on one interpreter lock, and the fsyncs it
shares were few to share (four slots; the grouped floor's flushes took 1.5 items on
average): the pooled runner per slot stays the best design that keeps §8's runner process.

Run: python3 benchmarks/bench_apscheduler.py [--quick] [--routines N] [--window S]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, EVENT_JOB_MISSED  # noqa: E402
from apscheduler.executors.pool import ThreadPoolExecutor  # noqa: E402
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore  # noqa: E402
from apscheduler.schedulers.background import BackgroundScheduler  # noqa: E402
from apscheduler.triggers.date import DateTrigger  # noqa: E402
from apscheduler.triggers.interval import IntervalTrigger  # noqa: E402
from sqlalchemy import create_engine, event  # noqa: E402

from benchmarks.floors import (  # noqa: E402
    CONCURRENCY,
    DESIGNS,
    PER_SECOND,
    PERIOD,
    TRUE,
    WARM_UP,
    floor_drain,
    floor_lags,
)
from benchmarks.harness import (  # noqa: E402
    Figure,
    cost_figure,
    info_figure,
    interleaved,
    percentile,
    print_notes,
    print_table,
    scratch,
)
from coven_core.clock import SystemClock, VirtualClock, WakeReason, WakeSignal  # noqa: E402
from coven_core.model import RevisionSpec  # noqa: E402
from coven_core.operator import Operator  # noqa: E402
from coven_core.runner.journal import read_journal  # noqa: E402
from coven_core.runtime.runner import RunnerRuntime  # noqa: E402
from coven_core.scheduling.passes import PassReport  # noqa: E402
from coven_core.scheduling.scheduler import Limits, Scheduler  # noqa: E402
from coven_core.store.store import Store  # noqa: E402

SCALE = 60.0  # our lag run: an engine minute per real second


# -- ours -----------------------------------------------------------------------------------
class ScaledClock(SystemClock):
    """The real clock, running ``scale``× faster from the moment it is made: now, monotonic
    and boot time alike, so the engine sees no jump; waits are scaled down to real seconds."""

    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale
        self._real0, self._mono0 = time.time(), time.monotonic()
        self._boot0 = super().boot_time()
        self.origin = datetime.fromtimestamp(self._real0, UTC)

    def now_utc(self) -> datetime:
        return self.origin + timedelta(seconds=(time.time() - self._real0) * self.scale)

    def monotonic(self) -> float:
        return self._mono0 + (time.monotonic() - self._mono0) * self.scale

    def boot_time(self) -> float:
        return self._boot0 + (super().boot_time() - self._boot0) * self.scale

    def real_of(self, instant: datetime) -> float:
        """The real time (epoch seconds) at which the engine's clock shows ``instant``."""
        return self._real0 + (instant - self.origin).total_seconds() / self.scale

    def _remaining(self, deadline: datetime | None, cap_end: float) -> float | None:
        to_cap = cap_end - time.monotonic()
        if deadline is None:
            return to_cap
        to_deadline = (deadline - self.now_utc()).total_seconds() / self.scale
        return None if to_deadline <= 0 else min(to_deadline, to_cap)


class Settled:
    """Counts settlements from the scheduler's pass reports; notes when ``goal`` is reached."""

    def __init__(self, goal: int, wake: WakeSignal) -> None:
        self.goal, self.wake, self.count = goal, wake, 0
        self.done_at: float | None = None

    def __call__(self, report: PassReport) -> None:
        self.count += report.settled
        if self.count >= self.goal and self.done_at is None:
            self.done_at = time.time()
            self.wake.set(WakeReason.SHUTDOWN)


def _add_routines(store: Store, specs: list[tuple[RevisionSpec, datetime | None]]) -> None:
    clock = VirtualClock(datetime.now(UTC))
    operator = Operator(store, clock, WakeSignal().set)
    for index, (spec, anchor) in enumerate(specs):
        operator.add_routine(f"r{index:04d}", spec, anchor=anchor)


def _run_engine(store: Store, clock: SystemClock, directory: Path, listener: Any,
                limits: Limits, until: Callable[[], bool]) -> None:  # fmt: skip
    wake = listener.wake
    runtime = RunnerRuntime(clock, wake, directory / "attempts")
    scheduler = Scheduler(store, clock, runtime, wake, limits=limits, listener=listener)
    loop = threading.Thread(target=scheduler.run, name="bench-scheduler", daemon=True)
    loop.start()
    while loop.is_alive() and not until():
        loop.join(0.05)  # real-time: the benchmark waits for its own run to finish
    wake.set(WakeReason.SHUTDOWN)
    loop.join(60)
    runtime.close()


def ours_drain(directory: Path, routines: int) -> float:
    store = Store.open(directory / "data", datetime.now(UTC))
    due = (datetime.now(UTC) + timedelta(minutes=2)).replace(second=0, microsecond=0)
    spec = RevisionSpec(f"once {due:%Y-%m-%dT%H:%M}", "UTC", TRUE)
    _add_routines(store, [(spec, None)] * routines)
    offset = (due - timedelta(seconds=1.5)) - datetime.now(UTC)
    clock = SystemClock(offset=offset)
    settled = Settled(routines, WakeSignal())
    limits = Limits(max_active=CONCURRENCY)
    _run_engine(store, clock, directory, settled, limits, lambda: settled.done_at is not None)
    store.close()
    if settled.done_at is None:
        raise RuntimeError(f"only {settled.count} of {routines} settled")
    return settled.done_at - (due - offset).timestamp()


def ours_lags(directory: Path, routines: int, window: float) -> list[float]:
    store = Store.open(directory / "data", datetime.now(UTC))
    clock = ScaledClock(SCALE)
    first = (clock.now_utc() + timedelta(minutes=3)).replace(second=0, microsecond=0)
    spec_of = [RevisionSpec(f"every {PERIOD}m", "UTC", (*TRUE, str(i))) for i in range(routines)]
    _add_routines(store, [(spec_of[i], first + timedelta(minutes=i // PER_SECOND))
                          for i in range(routines)])  # fmt: skip
    clock = ScaledClock(SCALE)  # restarted: engine minute `first` comes 3 real s from now
    clock.origin = first - timedelta(minutes=3)
    end_real = clock.real_of(first) + WARM_UP + window
    limits = Limits(max_active=CONCURRENCY, first_sweep_after=timedelta(days=30))
    _run_engine(store, clock, directory, Settled(10**9, WakeSignal()), limits,
                lambda: time.time() > end_real + 1.0)  # fmt: skip
    routine_of = _routine_indexes(store)
    store.close()
    return _journal_lags(directory / "attempts", routine_of, clock.real_of(first), window)


def _routine_indexes(store: Store) -> dict[str, int]:
    """Each attempt's routine, by its index (routine ``r0042`` is 42). From the store: a
    pooled runner's attempt directory holds no spec."""
    rows = store.conn.execute(
        "SELECT a.id, r.name FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
        "JOIN routines r ON r.id = o.routine_id"
    )
    return {attempt_id: int(name[1:]) for attempt_id, name in rows}


def _journal_lags(
    attempts: Path, routine_of: dict[str, int], first: float, window: float
) -> list[float]:
    lags = []
    for attempt_id, index in routine_of.items():
        spawned = read_journal(attempts / attempt_id / "journal.jsonl").spawned_at
        if spawned is not None:
            lags += _lag(spawned.timestamp(), first + index // PER_SECOND, first, window)
    if not lags:
        raise RuntimeError(f"no start measured in the window under {attempts}")
    return lags


def _lag(started: float, grid: float, first: float, window: float) -> list[float]:
    """The lag behind the routine's latest grid point, if that point is in the window."""
    due = grid + PERIOD * ((started - grid) // PERIOD)
    return [started - due] if first + WARM_UP <= due < first + WARM_UP + window else []


# -- APScheduler ----------------------------------------------------------------------------
ENTRIES: list[tuple[int, float]] = []


def run_true(index: int) -> None:
    """The job: note when it began, then run the command."""
    ENTRIES.append((index, time.time()))
    subprocess.run(TRUE, check=True)


def _wal_full(connection: Any, _record: Any) -> None:
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")


def apscheduler(directory: Path) -> BackgroundScheduler:
    # Its shutdown races its own wakeup thread ("cannot schedule new futures after
    # shutdown"): noise after every measurement has been taken.
    logging.getLogger("apscheduler").setLevel(logging.CRITICAL)
    engine = create_engine(f"sqlite:///{directory / 'apscheduler.db'}")
    event.listen(engine, "connect", _wal_full)
    return BackgroundScheduler(
        jobstores={"default": SQLAlchemyJobStore(engine=engine)},
        executors={"default": ThreadPoolExecutor(CONCURRENCY)},
        job_defaults={"misfire_grace_time": None, "coalesce": False, "max_instances": 1},
        timezone="UTC",
    )


def theirs_drain(directory: Path, routines: int) -> float:
    scheduler, finished = apscheduler(directory), threading.Event()
    count = [0]

    def listener(_event: Any) -> None:
        count[0] += 1
        if count[0] >= routines:
            finished.set()

    scheduler.add_listener(listener, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED)
    scheduler.start(paused=True)
    at = datetime.now(UTC)
    for index in range(routines):
        scheduler.add_job(run_true, DateTrigger(at), args=[index], id=f"r{index:04d}")
    started = time.time()
    scheduler.resume()
    if not finished.wait(300):
        raise RuntimeError(f"APScheduler ran only {count[0]} of {routines}")
    took = time.time() - started
    scheduler.shutdown(wait=True)
    return took


def theirs_lags(directory: Path, routines: int, window: float) -> list[float]:
    scheduler = apscheduler(directory)
    scheduler.start(paused=True)
    first = time.time() + 3.0 + 0.004 * routines  # after the jobs are stored
    for index in range(routines):
        start = datetime.fromtimestamp(first + index // PER_SECOND, UTC)
        trigger = IntervalTrigger(seconds=PERIOD, start_date=start, timezone="UTC")
        scheduler.add_job(run_true, trigger, args=[index], id=f"r{index:04d}")
    ENTRIES.clear()
    scheduler.resume()
    time.sleep(max(0.0, first + WARM_UP + window + 1.0 - time.time()))  # real-time: the run
    scheduler.shutdown(wait=True)
    lags = []
    for index, began in ENTRIES:
        lags += _lag(began, first + index // PER_SECOND, first, window)
    return lags


# -- the figures ----------------------------------------------------------------------------
def in_temp(action: Callable[[Path], Any]) -> Callable[[], Any]:
    def run() -> Any:
        with scratch("aps-") as directory:
            return action(directory)

    return run


def measure(routines: int, window: float, rounds: int) -> list[Figure]:
    floors: dict[str, list[float]] = {design: [] for design in DESIGNS}

    def theirs_then_floors(directory: Path) -> float:
        took = theirs_drain(directory, routines)
        for design in DESIGNS:
            (directory / design).mkdir()
            floors[design].append(floor_drain(directory / design, routines, design))
        return took

    lag_floors: dict[str, list[float]] = {design: [] for design in DESIGNS}

    def theirs_lag_then_floors(directory: Path) -> float:
        p99 = percentile(theirs_lags(directory, routines, window), 0.99)
        for design in DESIGNS:
            (directory / design).mkdir()
            lags = floor_lags(directory / design, routines, window, design)
            lag_floors[design].append(percentile(lags, 0.99))
        return p99

    drains = interleaved(in_temp(lambda d: ours_drain(d, routines)),
                         in_temp(theirs_then_floors), rounds=rounds, warm=False)  # fmt: skip
    p99s = interleaved(
        in_temp(lambda d: percentile(ours_lags(d, routines, window), 0.99)),
        in_temp(theirs_lag_then_floors), rounds=rounds, warm=False,
    )  # fmt: skip
    mine, theirs = (statistics.median(side) for side in drains)
    least = {design: statistics.median(floors[design]) for design in DESIGNS}
    lag_ours, lag_theirs = (statistics.median(side) * 1e3 for side in p99s)
    lag_least = {design: statistics.median(lag_floors[design]) * 1e3 for design in DESIGNS}
    name = "APScheduler 3, SQLAlchemy SQLite job store"
    return [
        cost_figure(f"drain of {routines:,} routines due at once, /bin/true", "s", mine, theirs,
                    1.0, baseline_name=name, note=f"concurrency {CONCURRENCY}, {rounds} rounds"),
        *_floor_figures("drain", "s", mine, theirs, least, name),
        cost_figure(f"start lag p99 at {PER_SECOND} due/s over {routines:,} routines", "ms",
                    lag_ours, lag_theirs, 1.0, baseline_name=name,
                    note=f"{window:g} s measured after {WARM_UP:g} s, {rounds} rounds; "
                         "ours on a 60× clock (minute resolution)"),
        *_floor_figures("start lag", "ms", lag_ours, lag_theirs, lag_least, name),
    ]  # fmt: skip


FLOOR_NAMES = {
    "inline": "§8's fsyncs and commits, 4 at a time",
    "grouped": "the same, with group commit",
    "forked": "+ a forked runner per attempt",
    "pooled": "+ a pooled runner per slot (ours)",
    "supervised": "+ one supervisor, group commit",
}


def _floor_figures(row: str, unit: str, mine: float, theirs: float, least: dict[str, float],
                   name: str) -> list[Figure]:  # fmt: skip
    """Each design's floor against the baseline, then ours against our design's floor."""
    figures = [
        info_figure(f"  {row} floor: {FLOOR_NAMES[design]}", unit, least[design], theirs,
                    least[design] / theirs, baseline_name=f"{name} (best reachable ratio)")
        for design in DESIGNS
    ]  # fmt: skip
    figures.append(info_figure(f"  {row} against the pooled runner's floor", unit, mine,
                               least["pooled"], mine / least["pooled"],
                               baseline_name="the floor of our design"))  # fmt: skip
    return figures


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``benchmarks/suite.py``)."""
    return measure(1000, 8.0 if quick else 15.0, 1 if quick else 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--routines", type=int, default=1000)
    parser.add_argument("--window", type=float, default=15.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    table = (figures(True) if args.quick
             else measure(args.routines, args.window, args.rounds))  # fmt: skip
    print_table(table, "APScheduler")
    print_notes(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
