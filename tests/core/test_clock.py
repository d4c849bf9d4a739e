"""The injected clock: virtual time never sleeps, and tells a clock step from a suspend."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from coven_core.clock import SAFETY_CAP, SystemClock, VirtualClock, WakeReason, WakeSignal

T0 = datetime(2026, 3, 8, 6, 0, tzinfo=UTC)


def test_autojump_goes_straight_to_the_deadline() -> None:
    clock = VirtualClock(T0)
    reason = clock.sleep_until_or_wake(T0 + timedelta(minutes=3), WakeSignal())
    assert reason is WakeReason.DEADLINE
    assert clock.now_utc() == T0 + timedelta(minutes=3)
    assert clock.monotonic() - 1000.0 == pytest.approx(180.0)


def test_autojump_without_deadline_stops_at_safety_cap() -> None:
    clock = VirtualClock(T0)
    assert clock.sleep_until_or_wake(None, WakeSignal()) is WakeReason.SAFETY_CAP
    assert clock.now_utc() == T0 + SAFETY_CAP


def test_far_deadline_is_capped() -> None:
    clock = VirtualClock(T0)
    reason = clock.sleep_until_or_wake(T0 + timedelta(hours=5), WakeSignal())
    assert reason is WakeReason.SAFETY_CAP
    assert clock.now_utc() == T0 + SAFETY_CAP


def test_pending_wake_returns_at_once_without_moving_time() -> None:
    clock, wake = VirtualClock(T0), WakeSignal()
    wake.set(WakeReason.DEFINITION_CHANGED)
    assert clock.sleep_until_or_wake(T0 + timedelta(hours=1), wake) is WakeReason.DEFINITION_CHANGED
    assert clock.now_utc() == T0
    assert not wake.is_set()


def test_shutdown_is_sticky_and_wins() -> None:
    wake = WakeSignal()
    wake.set(WakeReason.OPERATOR_COMMAND)
    wake.set(WakeReason.SHUTDOWN)
    assert wake.take() is WakeReason.SHUTDOWN
    assert wake.take() is WakeReason.SHUTDOWN


def test_past_deadline_does_not_move_time_backwards() -> None:
    clock = VirtualClock(T0)
    assert clock.sleep_until_or_wake(T0 - timedelta(hours=1), WakeSignal()) is WakeReason.DEADLINE
    assert clock.now_utc() == T0


def test_wall_step_moves_wall_only() -> None:
    clock = VirtualClock(T0)
    mono, boot = clock.monotonic(), clock.boot_time()
    clock.jump_wall(timedelta(hours=-2))
    assert clock.now_utc() == T0 - timedelta(hours=2)
    assert (clock.monotonic(), clock.boot_time()) == (mono, boot)


def test_suspend_moves_wall_and_boot_but_not_monotonic() -> None:
    clock = VirtualClock(T0)
    mono, boot = clock.monotonic(), clock.boot_time()
    clock.suspend(timedelta(hours=8))
    assert clock.now_utc() == T0 + timedelta(hours=8)
    assert clock.monotonic() == mono
    assert clock.boot_time() == boot + 8 * 3600


def test_aware_deadline_required() -> None:
    with pytest.raises(ValueError, match="aware"):
        VirtualClock(T0).sleep_until_or_wake(datetime(2026, 1, 1), WakeSignal())


class _Sleeper(threading.Thread):
    """A thread that sleeps on the clock once and records how it was woken and when."""

    def __init__(self, clock: VirtualClock, deadline: datetime, log: list[tuple[str, datetime]]):
        super().__init__(daemon=True)
        self.clock, self.deadline, self.log, self.wake = clock, deadline, log, WakeSignal()
        self.reason: WakeReason | None = None

    def run(self) -> None:
        self.reason = self.clock.sleep_until_or_wake(self.deadline, self.wake)
        self.log.append((self.name, self.clock.now_utc()))


def _start_sleepers(clock: VirtualClock, minutes: list[int]) -> tuple[list[_Sleeper], list]:
    log: list[tuple[str, datetime]] = []
    sleepers = [_Sleeper(clock, T0 + timedelta(minutes=m), log) for m in minutes]
    for index, sleeper in enumerate(sleepers):
        sleeper.name = f"s{index}"
        sleeper.start()
    clock.wait_for_waiters(len(sleepers))
    return sleepers, log


def test_advance_releases_waiters_in_deadline_order() -> None:
    clock = VirtualClock(T0, autojump=False, safety_cap=timedelta(hours=2))
    sleepers, log = _start_sleepers(clock, [30, 10, 20])
    clock.advance(timedelta(hours=1))
    for sleeper in sleepers:
        sleeper.join(5)
    assert [name for name, _ in log] == ["s1", "s2", "s0"]
    assert [at for _, at in log] == [T0 + timedelta(minutes=m) for m in (10, 20, 30)]
    assert clock.now_utc() == T0 + timedelta(hours=1)


def test_advance_short_of_deadline_keeps_waiter_blocked() -> None:
    clock = VirtualClock(T0, autojump=False, safety_cap=timedelta(hours=2))
    sleepers, log = _start_sleepers(clock, [3])
    clock.advance(timedelta(minutes=2))
    assert log == [] and clock.waiting_count() == 1
    clock.advance(timedelta(minutes=2))
    sleepers[0].join(5)
    assert sleepers[0].reason is WakeReason.DEADLINE


def test_a_deadline_time_already_passed_returns_at_once_without_autojump() -> None:
    """Time moved on while the thread was busy (a test advanced it mid-pass): the thread's
    next wait is due at once, as on the system clock; it waited for the next advance."""
    clock = VirtualClock(T0, autojump=False, safety_cap=timedelta(hours=2))
    clock.advance(timedelta(hours=1))
    done: list[WakeReason] = []
    sleeper = threading.Thread(
        target=lambda: done.append(clock.sleep_until_or_wake(T0 + timedelta(minutes=30),
                                                             WakeSignal()))
    )  # fmt: skip
    sleeper.start()
    sleeper.join(5)
    assert done == [WakeReason.DEADLINE] and clock.now_utc() == T0 + timedelta(hours=1)


def test_wake_from_another_thread_interrupts_a_virtual_wait() -> None:
    clock = VirtualClock(T0, autojump=False, safety_cap=timedelta(hours=2))
    sleepers, _ = _start_sleepers(clock, [60])
    sleepers[0].wake.set(WakeReason.OPERATOR_COMMAND)
    sleepers[0].join(5)
    assert sleepers[0].reason is WakeReason.OPERATOR_COMMAND
    assert clock.now_utc() == T0


@pytest.mark.parametrize(
    ("move", "expected"),
    [("jump_wall", WakeReason.CLOCK_JUMPED), ("suspend", WakeReason.SYSTEM_RESUMED)],
)
def test_discontinuities_notify_waiters(move: str, expected: WakeReason) -> None:
    clock = VirtualClock(T0, autojump=False, safety_cap=timedelta(hours=2))
    sleepers, _ = _start_sleepers(clock, [60])
    getattr(clock, move)(timedelta(hours=3))
    sleepers[0].join(5)
    assert sleepers[0].reason is expected


def test_system_clock_returns_at_once_for_a_past_deadline() -> None:
    clock = SystemClock()
    past = clock.now_utc() - timedelta(seconds=1)
    assert clock.sleep_until_or_wake(past, WakeSignal()) is WakeReason.DEADLINE


def test_system_clock_wakes_on_signal_from_another_thread() -> None:
    clock, wake = SystemClock(), WakeSignal()
    timer = threading.Timer(0.01, wake.set, args=(WakeReason.SHUTDOWN,))  # real-time: OS wait
    timer.start()
    assert clock.sleep_until_or_wake(None, wake) is WakeReason.SHUTDOWN


def test_system_clock_boot_time_counts_at_least_monotonic() -> None:
    clock = SystemClock()
    assert clock.boot_time() >= clock.monotonic() - 1.0
