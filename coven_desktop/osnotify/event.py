"""What the operating system told us about time: the :class:`OsEvent` value (DESIGN §3)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, get_args

from coven_core.clock import WakeReason

OsEventKind = Literal["sleeping", "resumed", "clock_changed", "timezone_changed"]

#: Every kind an :class:`OsEvent` may have.
KINDS: frozenset[str] = frozenset(get_args(OsEventKind))

#: The kinds that change what should run next; ``sleeping`` only marks the start of a sleep.
WAKING_KINDS: frozenset[str] = frozenset({"resumed", "clock_changed", "timezone_changed"})

_WAKE_REASONS: dict[str, WakeReason] = {
    "sleeping": WakeReason.SYSTEM_SLEEPING,  # recorded before the delay inhibitor is let go
    "resumed": WakeReason.SYSTEM_RESUMED,
    "clock_changed": WakeReason.CLOCK_JUMPED,
    "timezone_changed": WakeReason.TIMEZONE_CHANGED,
}


@dataclass(frozen=True, slots=True)
class OsEvent:
    """One notification from the OS (or from the drift fallback), ready to record.

    ``at`` is when Coven learned of it, from the injected wall clock, in UTC. Details are set
    where they are known: ``slept_seconds`` on ``resumed`` (None when the clocks cannot measure
    it), ``jump_seconds`` on ``clock_changed`` (positive: forward), and
    ``old_zone``/``new_zone`` (IANA keys; ``old_zone`` None when it was unknown) on
    ``timezone_changed``. ``source`` names what noticed it: ``logind``, ``timedated``,
    ``timerfd``, ``windows`` or ``drift``.
    """

    kind: OsEventKind
    at: datetime
    source: str
    slept_seconds: float | None = None
    jump_seconds: float | None = None
    old_zone: str | None = None
    new_zone: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown OS event kind {self.kind!r}")
        if self.at.utcoffset() != timedelta(0):
            raise ValueError("OsEvent.at must be an aware UTC datetime")


def wake_reason_for(event: OsEvent) -> WakeReason | None:
    """The engine's wake reason for ``event``: ``sleeping`` wakes a pass that records the runs
    in flight, then lets the suspend go on (DESIGN §14)."""
    return _WAKE_REASONS.get(event.kind)
