"""The injected clock and wake source (DESIGN §3).

Nothing in the engine reads the wall clock or sleeps except through a :class:`Clock`.
Production uses :class:`SystemClock`; tests use :class:`VirtualClock`, which jumps instead of
sleeping (as trio's ``MockClock`` does), so no test ever waits for real time to pass.

Three readings are kept apart because the engine must tell two discontinuities apart:

* a **wall-clock step** moves ``now_utc()`` only;
* a **suspend** moves ``now_utc()`` and ``boot_time()`` while ``monotonic()`` stands still,
  as Linux's ``CLOCK_MONOTONIC`` does.
"""

from __future__ import annotations

import enum
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

#: The longest one wait may last, so a missed OS notification cannot delay work indefinitely.
SAFETY_CAP = timedelta(minutes=5)


class WakeReason(enum.Enum):
    """Why ``sleep_until_or_wake`` returned."""

    DEADLINE = "deadline"
    DEFINITION_CHANGED = "definition_changed"
    OPERATOR_COMMAND = "operator_command"
    SHUTDOWN = "shutdown"
    SYSTEM_RESUMED = "system_resumed"
    CLOCK_JUMPED = "clock_jumped"
    TIMEZONE_CHANGED = "timezone_changed"
    SAFETY_CAP = "safety_cap"
    RUN_FINISHED = "run_finished"
    LEADER_GONE = "leader_gone"
    CONDITIONS_CHANGED = "conditions_changed"  # power or network changed (DESIGN §14)
    SYSTEM_SLEEPING = "system_sleeping"  # the machine is about to sleep (DESIGN §14)


_SLEEP_AND_RESUME = frozenset({WakeReason.SYSTEM_SLEEPING, WakeReason.SYSTEM_RESUMED})


class WakeSignal:
    """A latch that any thread may set with a reason to wake the scheduler at once.

    Reasons accumulate until taken, so two wakes in a row are never merged into silence.
    ``SHUTDOWN`` is sticky: once set it is reported by every later take.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._reasons: list[WakeReason] = []
        self._shutdown = False

    @property
    def condition(self) -> threading.Condition:
        return self._cond

    def set(self, reason: WakeReason) -> None:
        with self._cond:
            if reason is WakeReason.SHUTDOWN:
                self._shutdown = True
            self._reasons.append(reason)
            self._cond.notify_all()

    def is_set(self) -> bool:
        with self._cond:
            return self._pending_locked()

    def take(self) -> WakeReason | None:
        """The most important pending reason (shutdown first), clearing the rest."""
        with self._cond:
            return self._take_locked()

    def _pending_locked(self) -> bool:
        return self._shutdown or bool(self._reasons)

    def _take_locked(self) -> WakeReason | None:
        if self._shutdown:
            self._reasons.clear()
            return WakeReason.SHUTDOWN
        if not self._reasons:
            return None
        # The pass acts on the latest of sleep and resume (DESIGN §14: it records a sleep, or
        # takes its delay inhibitor again); any other reason only names the pass.
        power = [r for r in self._reasons if r in _SLEEP_AND_RESUME]
        chosen = power[-1] if power else self._reasons[0]
        self._reasons.clear()
        return chosen


class Clock(Protocol):
    """Time as the engine sees it."""

    def now_utc(self) -> datetime:
        """The wall clock, as an aware UTC datetime."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never steps and stands still in suspend."""
        ...

    def boot_time(self) -> float:
        """Seconds on a monotonic clock that keeps counting in suspend."""
        ...

    def sleep_until_or_wake(self, deadline: datetime | None, wake: WakeSignal) -> WakeReason:
        """Block until the wall clock reaches ``deadline`` (None: no deadline) or ``wake`` is set.

        Returns at the latest after :data:`SAFETY_CAP` with ``WakeReason.SAFETY_CAP``.
        """
        ...


def _require_aware(deadline: datetime | None) -> None:
    if deadline is not None and deadline.utcoffset() is None:
        raise ValueError("deadline must be an aware datetime")


class SystemClock:
    """The real clock. Waits are monotonic and recomputed from the wall clock at every wake."""

    def __init__(self, safety_cap: timedelta = SAFETY_CAP, offset: timedelta | None = None) -> None:
        self._cap = safety_cap.total_seconds()
        # Only tests shift the clock (coven_core.testing runs real processes shifted).
        self._offset = offset or timedelta(0)

    def now_utc(self) -> datetime:
        return datetime.now(UTC) + self._offset

    def monotonic(self) -> float:
        return time.monotonic()

    def boot_time(self) -> float:
        clock_id = getattr(time, "CLOCK_BOOTTIME", None)
        return time.clock_gettime(clock_id) if clock_id is not None else time.monotonic()

    def sleep_until_or_wake(self, deadline: datetime | None, wake: WakeSignal) -> WakeReason:
        _require_aware(deadline)
        cap_end = time.monotonic() + self._cap
        with wake.condition:
            while True:
                reason = wake._take_locked()
                if reason is not None:
                    return reason
                remaining = self._remaining(deadline, cap_end)
                if remaining is None:
                    return WakeReason.DEADLINE
                if remaining <= 0:
                    return WakeReason.SAFETY_CAP
                wake.condition.wait(remaining)

    def _remaining(self, deadline: datetime | None, cap_end: float) -> float | None:
        """Seconds to wait next; None when the deadline has passed; <= 0 when capped."""
        to_cap = cap_end - time.monotonic()
        if deadline is None:
            return to_cap
        to_deadline = (deadline - self.now_utc()).total_seconds()
        if to_deadline <= 0:
            return None
        return min(to_deadline, to_cap)


class _Waiter:
    """One thread waiting on the virtual clock; compared by identity, so two waiters with
    equal fields are still two."""

    __slots__ = ("capped", "deadline", "released", "thread", "wake")

    def __init__(
        self, deadline: datetime, capped: bool, wake: WakeSignal, thread: threading.Thread
    ) -> None:
        self.deadline = deadline  # already capped by the safety cap
        self.capped = capped
        self.wake = wake
        self.thread = thread
        self.released = False


class VirtualClock:
    """A clock for tests: time moves only when the test moves it.

    * ``autojump=True`` (default): a wait with no other thread to move time jumps straight to
      its deadline, so a single-threaded test drives the scheduler loop without sleeping.
    * ``autojump=False``: a waiting thread blocks until :meth:`advance` reaches its deadline or
      its wake signal is set. ``advance`` releases waiters in deadline order and lets each
      settle (wait again, or finish) before moving on, so runs are deterministic.
    """

    def __init__(
        self,
        start: datetime,
        *,
        autojump: bool = True,
        safety_cap: timedelta = SAFETY_CAP,
        settle_timeout: float = 10.0,
    ) -> None:
        _require_aware(start)
        self._wall = start.astimezone(UTC)
        self._mono = 1000.0
        self._boot = 1000.0
        self._autojump = autojump
        self._cap = safety_cap
        self._settle_timeout = settle_timeout
        self._lock = threading.Condition()
        self._waiters: list[_Waiter] = []

    # -- readings ---------------------------------------------------------------------------
    # Each reading is one attribute read, atomic on its own: the lock orders the moves of time
    # and the waiters, and a reading under it was no more consistent with the next reading.
    # Readings are most of the scheduler's calls into the clock (a pass makes ~8): through the
    # lock they were a seventh of the Python calls of the bookkeeping benchmark (issue #9).
    def now_utc(self) -> datetime:
        return self._wall

    def monotonic(self) -> float:
        return self._mono

    def boot_time(self) -> float:
        return self._boot

    # -- moving time ------------------------------------------------------------------------
    def advance(self, delta: timedelta | float) -> None:
        """Let ``delta`` pass normally, releasing waiters in deadline order on the way."""
        target = self.now_utc() + _as_timedelta(delta)
        while (waiter := self._next_due(target)) is not None:
            self._move_to(waiter.deadline)
            self._release(waiter)
        self._move_to(target)

    def advance_to(self, instant: datetime) -> None:
        self.advance(instant - self.now_utc())

    def jump_wall(self, delta: timedelta | float, *, notify: bool = True) -> None:
        """A wall-clock step (forward or backward): monotonic and boot time do not move."""
        with self._lock:
            self._wall += _as_timedelta(delta)
        if notify:
            self._wake_all(WakeReason.CLOCK_JUMPED)

    def suspend(self, duration: timedelta | float, *, notify: bool = True) -> None:
        """A system sleep: wall and boot time move, monotonic stands still."""
        seconds = _as_timedelta(duration).total_seconds()
        with self._lock:
            self._wall += timedelta(seconds=seconds)
            self._boot += seconds
        if notify:
            self._wake_all(WakeReason.SYSTEM_RESUMED)

    # -- waiting ----------------------------------------------------------------------------
    def sleep_until_or_wake(self, deadline: datetime | None, wake: WakeSignal) -> WakeReason:
        _require_aware(deadline)
        reason = wake.take()
        if reason is not None:
            return reason
        if self._autojump:
            return self._jump_for(deadline)
        if deadline is not None and deadline <= self.now_utc():
            return WakeReason.DEADLINE  # time moved on while this thread was busy: it is due
        cap_end = self.now_utc() + self._cap
        capped = deadline is None or deadline >= cap_end
        chosen = cap_end if capped or deadline is None else deadline
        return self._block(_Waiter(chosen, capped, wake, threading.current_thread()))

    def waiting_count(self) -> int:
        """How many threads are blocked in a wait right now."""
        with self._lock:
            return sum(1 for w in self._waiters if not w.released)

    def wait_for_waiters(self, count: int = 1) -> None:
        """Block the test until ``count`` threads are waiting (a real-time bounded wait)."""
        with self._lock:
            ok = self._lock.wait_for(
                lambda: self._waiting_locked() >= count, timeout=self._settle_timeout
            )
        if not ok:
            raise TimeoutError(f"expected {count} waiting thread(s) within the settle timeout")

    def _jump_for(self, deadline: datetime | None) -> WakeReason:
        cap_end = self.now_utc() + self._cap
        if deadline is None or deadline > cap_end:
            self._move_to(cap_end)
            return WakeReason.SAFETY_CAP
        self._move_to(max(deadline, self.now_utc()))
        return WakeReason.DEADLINE

    def _block(self, waiter: _Waiter) -> WakeReason:
        with self._lock:
            self._waiters.append(waiter)
            self._lock.notify_all()
        with waiter.wake.condition:
            waiter.wake.condition.wait_for(lambda: waiter.released or waiter.wake.is_set())
        with self._lock:
            self._waiters.remove(waiter)
            self._lock.notify_all()
        pending = waiter.wake.take()
        if pending is not None:
            return pending
        return WakeReason.SAFETY_CAP if waiter.capped else WakeReason.DEADLINE

    def _next_due(self, target: datetime) -> _Waiter | None:
        with self._lock:
            due = [w for w in self._waiters if not w.released and w.deadline <= target]
            return min(due, key=lambda w: w.deadline, default=None)

    def _release(self, waiter: _Waiter) -> None:
        with waiter.wake.condition:
            waiter.released = True
            waiter.wake.condition.notify_all()
        self._settle(waiter)

    def _settle(self, waiter: _Waiter) -> None:
        """Wait until the released thread waits again or has finished."""

        def settled() -> bool:
            if waiter in self._waiters:
                return False
            again = any(w.thread is waiter.thread and not w.released for w in self._waiters)
            return again or not waiter.thread.is_alive()

        with self._lock:
            if not self._lock.wait_for(settled, timeout=self._settle_timeout):
                raise TimeoutError("a woken thread did not settle within the settle timeout")

    def _wake_all(self, reason: WakeReason) -> None:
        with self._lock:
            signals = {id(w.wake): w.wake for w in self._waiters if not w.released}
        for signal in signals.values():
            signal.set(reason)

    def _waiting_locked(self) -> int:
        return sum(1 for w in self._waiters if not w.released)

    def _move_to(self, instant: datetime) -> None:
        """Normal passage of time: all three readings move together, never backwards."""
        with self._lock:
            seconds = (instant - self._wall).total_seconds()
            if seconds <= 0:
                return
            self._wall = instant
            self._mono += seconds
            self._boot += seconds


def _as_timedelta(delta: timedelta | float) -> timedelta:
    return delta if isinstance(delta, timedelta) else timedelta(seconds=delta)
