"""The hub every source reports to; it turns reports into :class:`OsEvent` values on one signal.

Sources only say *what* happened ("going to sleep", "the clock was set", "the zone may have
changed"); the notifier measures the details from the injected clocks, keeps the state that
spans two reports (the last moment known awake, the last clock baseline, the last known zone)
and drops reports that are not news (a zero-second clock set, an unchanged zone).

The time asleep is the growth of boot time over monotonic time since the last moment known
awake (the start, or the previous resume), not since the "sleeping" report: without an
inhibitor lock the machine may sleep before that report is handled, and both reports are then
handled after the resume. Boot time outgrows monotonic time only in suspend, so the growth
since the previous resume is exactly the last sleep either way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal

from coven_core.errors import ZoneError
from coven_desktop.osnotify.clocks import TOLERANCE_SECONDS, Clocks
from coven_desktop.osnotify.event import OsEvent, OsEventKind

log = logging.getLogger(__name__)

ZoneLookup = Callable[[], "str | None"]


class Source(Protocol):
    """One notification source: which kinds of event it covers, and how to stop it."""

    name: str
    kinds: frozenset[str]

    def stop(self) -> None: ...


class Notifier(QObject):
    """Emits :attr:`occurred` with an :class:`OsEvent` whenever a source reports one."""

    occurred = Signal(object)

    def __init__(self, clocks: Clocks, local_zone: ZoneLookup, parent: QObject | None = None):
        super().__init__(parent)
        self._clocks = clocks
        self._local_zone = local_zone
        self._zone = self._look_up_zone()
        self._awake = clocks.read()
        self._clock_baseline = clocks.read()
        self._sources: list[Source] = []

    # -- sources ------------------------------------------------------------------------------
    def add_source(self, source: Source) -> None:
        self._sources.append(source)
        log.info("OS notifications: %s covers %s", source.name, ", ".join(sorted(source.kinds)))

    @property
    def source_names(self) -> tuple[str, ...]:
        return tuple(source.name for source in self._sources)

    @property
    def covered(self) -> frozenset[str]:
        """The event kinds some source watches."""
        return frozenset().union(*(source.kinds for source in self._sources))

    @property
    def zone(self) -> str | None:
        """The last known host zone (an IANA key), or None when it could not be proven."""
        return self._zone

    def stop(self) -> None:
        """Stop every source (close file descriptors, timers, filters); idempotent."""
        while self._sources:
            self._sources.pop().stop()

    # -- reports ------------------------------------------------------------------------------
    def report_sleeping(self, source: str) -> None:
        self._emit("sleeping", source)

    def report_resumed(self, source: str, slept_seconds: float | None = None) -> None:
        """The machine woke up; without ``slept_seconds`` it is measured (None: not measurable,
        as with a boot time that stops in sleep, or a sleep that failed)."""
        reading = self._clocks.read()
        if slept_seconds is None:
            slept = reading.slept_since(self._awake)
            slept_seconds = slept if slept > 0 else None
        self._awake = reading
        self._emit("resumed", source, slept_seconds=slept_seconds)

    def report_clock_set(self, source: str) -> None:
        """The wall clock was set: measure the step since the last baseline and start a new one.

        Linux also cancels the timer on resume from sleep, with no step: steps within the
        tolerance are dropped as noise.
        """
        reading = self._clocks.read()
        step = reading.stepped_since(self._clock_baseline)
        self._clock_baseline = reading
        if abs(step) > TOLERANCE_SECONDS:
            self._emit("clock_changed", source, jump_seconds=step)

    def report_clock_jump(self, source: str, jump_seconds: float) -> None:
        self._clock_baseline = self._clocks.read()
        self._emit("clock_changed", source, jump_seconds=jump_seconds)

    def report_zone(self, source: str, zone: str | None) -> None:
        """A source says the host zone is ``zone`` now; emits only when that is news."""
        if not zone or zone == self._zone:
            return
        old, self._zone = self._zone, zone
        self._emit("timezone_changed", source, old_zone=old, new_zone=zone)

    def check_zone(self, source: str) -> None:
        """Look the host zone up again (when a source knows it changed but not to what)."""
        self.report_zone(source, self._look_up_zone())

    # -- helpers ------------------------------------------------------------------------------
    def _look_up_zone(self) -> str | None:
        try:
            return self._local_zone()
        except (OSError, ZoneError) as error:
            log.warning("the host time zone cannot be proven: %s", error)
            return None

    def _emit(self, kind: OsEventKind, source: str, **details: Any) -> None:
        event = OsEvent(kind, self._clocks.utc_now(), source, **details)
        log.info("OS event: %s", event)
        self.occurred.emit(event)
