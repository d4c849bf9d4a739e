"""Telling why time passed with nothing run: asleep, a clock jump, or the app not running
(DESIGN §3). The portable fallback compares three clocks between passes:

* wall moved more than monotonic, and boot time moved with wall → the machine was asleep
  (Linux's CLOCK_MONOTONIC stands still in suspend, CLOCK_BOOTTIME does not);
* wall moved more (or less) than monotonic while boot time did not → the wall clock was set;
* the first pass of a process → the app was not running before it.

OS notifications (logind, timedated, a timerfd; issue #7) arrive as wake reasons and take
precedence over the inference.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

import apsw

from coven_core import events
from coven_core.clock import Clock, WakeReason
from coven_core.events import EventKind
from coven_core.model import MissedCause
from coven_core.scheduling import backoffs
from coven_core.scheduling.passes import last_pass_at
from coven_core.store.codec import instant_from

#: Drift below this is scheduling noise, not a discontinuity.
DRIFT_TOLERANCE = timedelta(seconds=2)


class Reading(NamedTuple):
    wall: datetime
    monotonic: float
    boot: float


class Drift(NamedTuple):
    """How wall time moved against monotonic and boot time since the previous pass."""

    step: timedelta  # wall - monotonic: positive forward, negative backward
    asleep: timedelta  # boot - monotonic

    @property
    def slept(self) -> bool:
        return self.asleep > DRIFT_TOLERANCE

    @property
    def jumped(self) -> bool:
        return abs(self.step - self.asleep) > DRIFT_TOLERANCE


class DriftWatch:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._last: Reading | None = None
        self._drift: Drift | None = None

    def _read(self, now: datetime) -> Reading:
        return Reading(now, self._clock.monotonic(), self._clock.boot_time())

    def cause(self, trigger: str, now: datetime) -> MissedCause:
        """Why moments due before ``now`` may have been missed; also takes a new reading."""
        reading, previous = self._read(now), self._last
        self._last = reading
        if previous is None:
            self._drift = None
            return MissedCause.APP_NOT_RUNNING
        self._drift = _drift(previous, reading)
        if trigger == WakeReason.SYSTEM_RESUMED.value or self._drift.slept:
            return MissedCause.ASLEEP
        if trigger == WakeReason.CLOCK_JUMPED.value or self._drift.jumped:
            return MissedCause.CLOCK_JUMP
        return MissedCause.LATE

    def record(self, conn: apsw.Connection, now: datetime, trigger: str) -> None:
        """Write what the last reading showed as events (inside the pass's transaction)."""
        drift = self._drift
        if drift is None:
            _record_downtime(conn, now)
            return
        if drift.slept:
            start = now - drift.asleep
            events.record(conn, now, EventKind.SLEPT, start=start.isoformat(), end=now.isoformat())
        if drift.jumped:
            step = drift.step - drift.asleep
            size = step.total_seconds()
            moved = backoffs.follow_the_clock(conn, step)
            events.record(
                conn, now, EventKind.CLOCK_JUMPED, seconds=size, trigger=trigger, backoffs=moved
            )
            if size < 0:
                events.record(conn, now, EventKind.REPLANNED, why="the wall clock moved back")


def _drift(previous: Reading, reading: Reading) -> Drift:
    wall = reading.wall - previous.wall
    mono = timedelta(seconds=reading.monotonic - previous.monotonic)
    boot = timedelta(seconds=reading.boot - previous.boot)
    return Drift(step=wall - mono, asleep=boot - mono)


def _record_downtime(conn: apsw.Connection, now: datetime) -> None:
    last = last_pass_at(conn)
    if last is not None and now - instant_from(last) > DRIFT_TOLERANCE:
        events.record(conn, now, EventKind.DOWNTIME, start=last, end=now.isoformat())
