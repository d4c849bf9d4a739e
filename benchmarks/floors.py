"""The floors of ``bench_apscheduler``: §8's durable work per attempt, in each runner design.

The drain floor runs ``routines`` attempts, CONCURRENCY at a time; the start-lag floor runs
them at the lag run's steady rate. Each design does the runner work its own way
(:func:`runners_for`). Kept apart from the APScheduler side so that their tests need only
the engine (the README's test command installs no APScheduler).
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.bench_dispatch import TRUE, floor_attempt, floor_store, runner_floor_attempt
from benchmarks.group_floor import GroupedFloor
from benchmarks.runner_floor import RunnerFloor
from benchmarks.supervisor_floor import Supervised, SupervisedSlot

CONCURRENCY = 4  # our default Limits.max_active; APScheduler's ThreadPoolExecutor(4)
PER_SECOND, PERIOD = 20, 50  # 20 due each second; each routine every 50 s: 1,000 routines
WARM_UP = 3.0  # seconds of a lag run not measured
#: The floors' runner designs (runners_for).
DESIGNS = ("inline", "grouped", "forked", "pooled", "supervised")


def floor_drain(directory: Path, routines: int, design: str = "inline") -> float:
    """The floor (see above): ``routines`` attempts, CONCURRENCY at a time, the runner work
    done as ``design`` says (:func:`runners_for`)."""
    share = routines // CONCURRENCY
    runners = runners_for(design, directory)
    workers = [threading.Thread(target=_drain_worker, args=(directory / f"w{n}", share, runner))
               for n, runner in enumerate(runners)]  # fmt: skip
    started = time.time()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    took = time.time() - started
    _close(runners)
    return took


Runner = RunnerFloor | GroupedFloor | SupervisedSlot | None


def runners_for(design: str, directory: Path) -> list[Runner]:
    """Each slot's runner: ``inline`` none (the work in the slot's thread), ``grouped`` none
    either, but one journal and one store for all slots with group commit, ``forked`` one
    fork server for all that forks a runner per attempt, ``pooled`` a long-lived runner per
    slot doing one attempt after another (ours), ``supervised`` one long-lived process for
    all slots with one group-committed journal (``supervisor_floor``)."""
    if design == "inline":
        return [None] * CONCURRENCY
    if design == "grouped":
        return [GroupedFloor(directory / "shared")] * CONCURRENCY
    if design == "forked":
        return [RunnerFloor(TRUE)] * CONCURRENCY
    if design == "supervised":
        return list(Supervised(directory / "shared", CONCURRENCY).slots)
    return [RunnerFloor(TRUE, pooled=True) for _ in range(CONCURRENCY)]


def _close(runners: list[Runner]) -> None:
    for runner in {id(runner): runner for runner in runners if runner is not None}.values():
        runner.close()


def _drain_worker(directory: Path, count: int, runner: Runner) -> None:
    slot = _Slot(directory, runner)
    for _ in range(count):
        slot.attempt(lambda _started: None)
    slot.close()


def floor_lags(
    directory: Path, routines: int, window: float, design: str = "inline"
) -> list[float]:
    """The floor's start lags at the same steady rate: each second the group due then is
    queued (routine i is due at ``first + i // PER_SECOND``, again every PERIOD s) for
    CONCURRENCY threads doing the floor's attempts; the lag ends where APScheduler's does,
    just before ``subprocess.run``, after the decision's commit and the ``intent``.
    With runner processes (``design``, :func:`runners_for`), each attempt's runner work is
    done by one, and the lag ends at its spawn."""
    due: queue.SimpleQueue[tuple[float, int] | None] = queue.SimpleQueue()
    runners = runners_for(design, directory)
    first = time.time() + 1.0
    lags: list[tuple[float, float]] = []
    workers = [threading.Thread(target=_floor_worker,
                                args=(directory / f"w{n}", due, lags, runner))
               for n, runner in enumerate(runners)]  # fmt: skip
    for worker in workers:
        worker.start()
    for second in range(int(WARM_UP + window) + 1):
        time.sleep(max(0.0, first + second - time.time()))  # real-time: the floor's clock
        group = second % PERIOD
        for index in range(group * PER_SECOND, min(routines, (group + 1) * PER_SECOND)):
            due.put((first + second, index))
    for _ in workers:
        due.put(None)
    for worker in workers:
        worker.join()
    _close(runners)
    measured = [lag for at, lag in lags if first + WARM_UP <= at < first + WARM_UP + window]
    if not measured:  # a worker failed (its traceback is above)
        raise RuntimeError("the start-lag floor started nothing in the measured window")
    return measured


def _floor_worker(directory: Path, due: queue.SimpleQueue[tuple[float, int] | None],
                  lags: list[tuple[float, float]], runner: Runner) -> None:  # fmt: skip
    slot = _Slot(directory, runner)
    while (item := due.get()) is not None:
        slot.attempt(lambda started, at=item[0]: lags.append((at, started - at)))
    slot.close()


class _Slot:
    """One slot's attempts in its design: :meth:`attempt` runs one and tells ``started`` the
    epoch instant just before its command starts."""

    def __init__(self, directory: Path, runner: Runner) -> None:
        self._directory, self._runner = directory, runner
        # The grouped and supervised designs keep one store for all slots; the others, one a
        # slot.
        shared = isinstance(runner, GroupedFloor | SupervisedSlot)
        self._store = None if shared else floor_store(directory)
        self._attempts = itertools.count()

    def attempt(self, started: Callable[[float], None]) -> None:
        def on_start() -> None:
            started(time.time())

        if isinstance(self._runner, GroupedFloor):
            self._runner.attempt(on_start)
        elif isinstance(self._runner, SupervisedSlot):
            started(self._runner.attempt())
        elif self._runner is None:
            floor_attempt(self._store, self._directory, next(self._attempts), on_start)
        else:
            index = next(self._attempts)
            started(runner_floor_attempt(self._store, self._directory, index, self._runner))

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
