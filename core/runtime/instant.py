"""A runtime whose commands end the moment they start — for benchmarks of the engine's own
bookkeeping and for virtual-time tests of the lifecycle. Nothing is executed."""

from __future__ import annotations

from datetime import datetime

from coven_core.clock import Clock, WakeReason, WakeSignal
from coven_core.runtime.base import Exit, Launch, Started, Unfinished, as_recorded, unknowable


class InstantRuntime:
    def __init__(self, clock: Clock, wake: WakeSignal | None = None, exit_code: int = 0) -> None:
        self._clock, self._wake, self.exit_code = clock, wake, exit_code
        self._exits: list[Exit] = []
        self.launches: list[Launch] = []

    def start(self, launch: Launch) -> Started:
        self.launches.append(launch)
        self._exits.append(Exit(launch.attempt_id, self._clock.now_utc(), self.exit_code))
        if self._wake is not None:
            self._wake.set(WakeReason.RUN_FINISHED)
        return Started(None)

    def recover(self, attempt: Unfinished, now: datetime) -> Exit | None:
        return unknowable(attempt, now)

    def cancel(self, attempt_id: str) -> bool:
        return False

    def locate(self, attempt: Unfinished) -> Unfinished:
        return as_recorded(attempt)

    def collect(self) -> list[Exit]:
        exits, self._exits = self._exits, []
        return exits

    def active(self) -> int:
        return len(self._exits)

    def drain(self, timeout: float) -> None:
        return None
