"""Engine fixtures: a real store in a temp dir, a virtual clock, a runtime the test controls."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from coven_core.clock import VirtualClock, WakeReason, WakeSignal
from coven_core.model import RevisionSpec
from coven_core.operator import Operator
from coven_core.runtime.base import Exit, Launch, Started, Unfinished, unknowable
from coven_core.runtime.runner import RunnerRuntime
from coven_core.scheduling.lease import LEASE_TTL
from coven_core.scheduling.scheduler import Limits, Scheduler
from coven_core.store.store import Store

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@dataclass
class ScriptedRuntime:
    """Commands run until the test ends them: ``finish(attempt, code)``."""

    clock: VirtualClock
    wake: WakeSignal
    launches: list[Launch] = field(default_factory=list)
    running: dict[str, Launch] = field(default_factory=dict)
    _exits: list[Exit] = field(default_factory=list)
    auto_exit: int | None = 0  # end each command as soon as it starts, with this status

    cancels: list[str] = field(default_factory=list)
    recovered: list[Unfinished] = field(default_factory=list)

    def start(self, launch: Launch) -> Started:
        self.launches.append(launch)
        if self.auto_exit is not None:
            self._exits.append(Exit(launch.attempt_id, self.clock.now_utc(), self.auto_exit))
            self.wake.set(WakeReason.RUN_FINISHED)
        else:
            self.running[launch.attempt_id] = launch
        return Started(4242)

    def finish(self, launch: Launch, code: int = 0, **details: object) -> None:
        del self.running[launch.attempt_id]
        self._exits.append(Exit(launch.attempt_id, self.clock.now_utc(), code, **details))  # type: ignore[arg-type]
        self.wake.set(WakeReason.RUN_FINISHED)

    def recover(self, attempt: Unfinished, now: datetime) -> Exit | None:
        self.recovered.append(attempt)
        return unknowable(attempt, now)

    def locate(self, attempt: Unfinished) -> Unfinished:
        return attempt

    def cancel(self, attempt_id: str) -> bool:
        if attempt_id not in self.running:
            return False
        self.cancels.append(attempt_id)
        return True

    def collect(self) -> list[Exit]:
        exits, self._exits = self._exits, []
        return exits

    def active(self) -> int:
        return len(self.running)

    def drain(self, timeout: float) -> None:
        return None


@dataclass
class Engine:
    store: Store
    clock: VirtualClock
    wake: WakeSignal
    runtime: ScriptedRuntime
    scheduler: Scheduler
    operator: Operator

    def add(self, name: str, schedule: str, tz: str = "UTC", **options: object) -> str:
        spec = RevisionSpec(schedule=schedule, timezone=tz, argv=("/bin/true",), **options)  # type: ignore[arg-type]
        return self.operator.add_routine(name, spec)

    def run_until(self, instant: datetime) -> None:
        """Drive the loop under virtual time: pass, sleep to the deadline, pass, … ."""
        self.scheduler.pass_once("startup") if self.scheduler.last_report is None else None
        while True:
            deadline = self.scheduler.deadline
            if self.wake.is_set():
                self.scheduler.pass_once(str(self.wake.take().value))  # type: ignore[union-attr]
                continue
            if deadline is None or deadline > instant:
                self.clock.advance_to(max(instant, self.clock.now_utc()))
                return
            self.clock.advance_to(max(deadline, self.clock.now_utc()))
            self.scheduler.pass_once("deadline")

    def history(self, routine_id: str) -> list[tuple]:
        return list(
            self.store.conn.execute(
                "SELECT scheduled_utc, kind, state, disposition, reason, window_count, cause "
                "FROM occurrences WHERE routine_id = ? ORDER BY scheduled_utc, id",
                (routine_id,),
            )
        )


def make_engine(data_dir, clock: VirtualClock, **limits: object) -> Engine:
    wake = WakeSignal()
    store = Store.open(data_dir, clock.now_utc())
    runtime = ScriptedRuntime(clock, wake)
    scheduler = Scheduler(store, clock, runtime, wake, limits=Limits(**limits))  # type: ignore[arg-type]
    operator = Operator(store, clock, wake.set)
    return Engine(store, clock, wake, runtime, scheduler, operator)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(T0)


@pytest.fixture
def engine(tmp_path, clock: VirtualClock) -> Iterator[Engine]:
    built = make_engine(tmp_path / "data", clock)
    yield built
    built.store.close()


def after_a_dead_leader(
    data_dir: Path, clock: VirtualClock, name: str, **options: object
) -> tuple[Engine, str]:
    """A leader that started ``name``'s first run (hourly; its command still running) and
    died with it (its store closed); a new engine on the same store once that lease has
    expired, before its first pass. The new engine, and the routine's id."""
    old = make_engine(data_dir, clock)
    old.runtime.auto_exit = None
    routine_id = old.add(name, "@hourly", **options)
    old.run_until(clock.now_utc() + minutes(1))
    old.store.close()
    clock.advance(LEASE_TTL + timedelta(seconds=1))
    return make_engine(data_dir, clock), routine_id


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


@dataclass
class RealRunners:
    """A scheduler on a real store whose commands run through real runner processes."""

    store: Store
    wake: WakeSignal
    runtime: RunnerRuntime
    scheduler: Scheduler
    operator: Operator

    def run_now_to_the_end(self, name: str) -> None:
        """Run ``name`` now, wait (real time) for its runner to end, then settle and deliver."""
        self.operator.run_now(name)
        self.scheduler.pass_once("operator_command")
        with self.wake.condition:  # real time: a real runner process reports through the wake
            assert self.wake.condition.wait_for(lambda: self.runtime.active() == 0, timeout=30)
        self.scheduler.pass_once("run_finished")


@contextmanager
def real_runners(data_dir: Path, clock: VirtualClock) -> Iterator[RealRunners]:
    wake = WakeSignal()
    store = Store.open(data_dir, clock.now_utc())
    runtime = RunnerRuntime(clock, wake, store.data_dir / "attempts")
    try:
        yield RealRunners(store, wake, runtime, Scheduler(store, clock, runtime, wake),
                          Operator(store, clock, wake.set))  # fmt: skip
    finally:
        runtime.close()
        store.close()
