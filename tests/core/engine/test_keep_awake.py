"""Keeping the machine awake (issue #23, DESIGN §14): a block inhibitor while a run of a
``--keep-awake`` routine is active, and a delay inhibitor released once a sleep is recorded.
The host's ``inhibit`` is faked with pipes: an inhibitor is held while its write end is open."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import timedelta

import pytest

from coven_core.clock import WakeReason
from coven_core.host import HostWatch
from coven_core.scheduling.awake import SleepGuard
from tests.core.conftest import T0, Engine


class FakeLogind:
    """Hands out the write end of a pipe per inhibitor; its read end sees EOF once released."""

    def __init__(self) -> None:
        self.taken: list[tuple[str, str, int]] = []  # mode, why, read end

    def inhibit(self, mode: str, why: str) -> int:
        read, write = os.pipe()
        os.set_blocking(read, False)
        self.taken.append((mode, why, read))
        return write

    def held(self, mode: str) -> list[str]:
        return [why for taken_mode, why, read in self.taken if taken_mode == mode and _open(read)]


def _open(read: int) -> bool:
    try:
        return os.read(read, 1) != b""  # b"": every write end is closed
    except BlockingIOError:
        return True


@pytest.fixture
def logind(engine: Engine) -> Iterator[FakeLogind]:
    fake = FakeLogind()
    engine.scheduler.host = HostWatch(inhibit=fake.inhibit)
    host = engine.scheduler.host
    engine.scheduler.awake = SleepGuard(host.inhibit, host.release)  # as the scheduler builds it
    yield fake
    engine.scheduler.awake.release_all()
    for _mode, _why, read in fake.taken:
        os.close(read)


def test_a_keep_awake_run_holds_a_block_inhibitor_until_it_settles(
    engine: Engine, logind: FakeLogind
) -> None:
    engine.runtime.auto_exit = None
    engine.add("backup", "0 13 * * *", keep_awake=True)
    engine.add("plain", "0 13 * * *")
    engine.run_until(T0 + timedelta(hours=1, minutes=1))
    assert len(engine.runtime.running) == 2
    (held,) = logind.held("block")
    assert held.startswith("routine backup is running")
    for launch in list(engine.runtime.running.values()):
        engine.runtime.finish(launch)
    engine.run_until(engine.clock.now_utc())
    assert logind.held("block") == []


def test_the_block_inhibitor_is_taken_before_the_command_starts(
    engine: Engine, logind: FakeLogind
) -> None:
    seen: list[list[str]] = []
    start = engine.runtime.start

    def start_and_look(launch):  # type: ignore[no-untyped-def]
        seen.append(logind.held("block"))
        return start(launch)

    engine.runtime.start = start_and_look  # type: ignore[method-assign]
    engine.add("backup", "0 13 * * *", keep_awake=True)
    engine.run_until(T0 + timedelta(hours=1, minutes=1))
    assert len(seen) == 1 and len(seen[0]) == 1
    assert logind.held("block") == []  # it ended at once, and its settlement released it


def test_the_delay_inhibitor_is_released_after_the_sleep_is_recorded(
    engine: Engine, logind: FakeLogind
) -> None:
    engine.runtime.auto_exit = None
    engine.add("backup", "0 13 * * *")
    engine.scheduler.awake.take_delay()  # as run() does at its start
    engine.run_until(T0 + timedelta(hours=1, minutes=1))
    assert logind.held("delay") != []
    engine.wake.set(WakeReason.SYSTEM_SLEEPING)
    engine.run_until(engine.clock.now_utc())
    assert logind.held("delay") == []
    (data,) = engine.store.conn.execute(
        "SELECT data FROM events WHERE kind = 'sleeping'"
    ).fetchone()
    (running,) = engine.runtime.running.values()
    assert json.loads(data)["in_flight"] == [running.occurrence_id]
    engine.clock.suspend(timedelta(minutes=30), notify=False)
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    engine.run_until(engine.clock.now_utc())
    assert len(logind.held("delay")) == 1  # taken again on waking


def test_a_sleep_then_a_resume_before_any_pass_only_takes_the_delay_again(
    engine: Engine, logind: FakeLogind
) -> None:
    engine.wake.set(WakeReason.RUN_FINISHED)
    engine.wake.set(WakeReason.SYSTEM_SLEEPING)
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    assert engine.wake.take() is WakeReason.SYSTEM_RESUMED
    engine.wake.set(WakeReason.RUN_FINISHED)
    engine.wake.set(WakeReason.SYSTEM_SLEEPING)
    assert engine.wake.take() is WakeReason.SYSTEM_SLEEPING  # never lost behind another reason
    assert logind.taken == []


def test_a_host_that_cannot_inhibit_runs_the_routine_all_the_same(engine: Engine) -> None:
    def refusing(mode: str, why: str) -> int:
        raise OSError("logind refused")

    engine.scheduler.awake = SleepGuard(refusing)
    engine.add("backup", "0 13 * * *", keep_awake=True)
    engine.run_until(T0 + timedelta(hours=1, minutes=1))
    assert len(engine.runtime.launches) == 1 and engine.scheduler.awake.held == {}


class FakePowerRequests:
    """The system's own inhibitors, as macOS and Windows hand them out (``keepawake``):
    block only, no delay."""

    def __init__(self) -> None:
        self.held: dict[int, str] = {}
        self._next = 1

    def inhibit(self, mode: str, why: str) -> int | None:
        if mode != "block":
            return None
        self._next += 1
        self.held[self._next] = why
        return self._next

    def release(self, handle: int) -> None:
        del self.held[handle]


def test_without_logind_the_system_s_own_requests_keep_the_machine_awake(
    engine: Engine,
) -> None:
    """macOS and Windows: the app's host falls back to the portable one, and so does
    ``coven daemon``; either takes the system's power requests."""
    from coven_core.host import PortableHost

    requests = FakePowerRequests()
    host = engine.scheduler.host = HostWatch(fallback=PortableHost(requests=requests))
    engine.scheduler.awake = SleepGuard(host.inhibit, host.release)  # as the scheduler builds it
    engine.runtime.auto_exit = None
    engine.add("backup", "0 13 * * *", keep_awake=True)
    engine.run_until(T0 + timedelta(hours=1, minutes=1))
    (running,) = engine.runtime.running.values()
    assert list(requests.held.values()) == [f"routine backup is running ({running.occurrence_id})"]
    engine.runtime.finish(running)
    engine.run_until(engine.clock.now_utc())
    assert requests.held == {}  # let go in the pass that settled the run
