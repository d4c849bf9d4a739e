"""The three injected clocks, read together, and the two drifts they reveal.

A **suspend** moves boot time but not monotonic time (Linux's ``CLOCK_MONOTONIC`` stands still
asleep, ``CLOCK_BOOTTIME`` does not). A **wall-clock step** moves the wall clock against boot
time. Comparing the wall clock with boot time rather than monotonic time keeps a sleep from
looking like a forward step: it is the wall-vs-monotonic drift with the time asleep taken out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

#: Drift below this is scheduling noise (NTP slew, timer latency), not a discontinuity.
#: The engine's own inference between passes uses the same two seconds.
TOLERANCE_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class Reading:
    wall: datetime
    monotonic: float
    boot: float

    def slept_since(self, earlier: Reading) -> float:
        """Seconds spent asleep between ``earlier`` and this reading."""
        return (self.boot - earlier.boot) - (self.monotonic - earlier.monotonic)

    def stepped_since(self, earlier: Reading) -> float:
        """Seconds the wall clock was set by (positive: forward), sleep excluded."""
        return (self.wall - earlier.wall).total_seconds() - (self.boot - earlier.boot)


@dataclass(frozen=True, slots=True)
class Clocks:
    """Wall, monotonic and boot time, injected so that tests move them by hand."""

    now: Callable[[], datetime]
    monotonic: Callable[[], float]
    boot_time: Callable[[], float]

    def read(self) -> Reading:
        return Reading(self.utc_now(), self.monotonic(), self.boot_time())

    def utc_now(self) -> datetime:
        instant = self.now()
        if instant.utcoffset() is None:
            raise ValueError("the injected now() must return an aware datetime")
        return instant.astimezone(UTC)
