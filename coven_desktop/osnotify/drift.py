"""The portable fallback: notice sleep, clock steps and zone changes by comparing clocks.

It runs only for the kinds of event that no notification source covers, at a modest rate (a
tick every 30 s by default), and not at all when every kind is covered: the idle-cost benchmark
counts wakeups. A tick compares boot-vs-monotonic growth (time asleep) and wall-vs-boot growth
(a clock step) with the previous tick, and looks the host zone up again.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from coven_desktop.osnotify.clocks import TOLERANCE_SECONDS, Clocks
from coven_desktop.osnotify.notifier import Notifier

#: The kinds the fallback can stand in for (it cannot see a sleep coming).
FALLBACK_KINDS = frozenset({"resumed", "clock_changed", "timezone_changed"})


class DriftFallback(QObject):
    name = "drift"

    def __init__(
        self, notifier: Notifier, clocks: Clocks, kinds: frozenset[str], interval_ms: int
    ) -> None:
        super().__init__(notifier)
        self.kinds = kinds & FALLBACK_KINDS
        self._notifier = notifier
        self._clocks = clocks
        self._last = clocks.read()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)

    def start(self) -> None:
        self._last = self._clocks.read()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def is_running(self) -> bool:
        return self._timer.isActive()

    def check(self) -> None:
        """One tick: compare the clocks with the previous tick and report what changed."""
        reading, previous = self._clocks.read(), self._last
        self._last = reading
        slept = reading.slept_since(previous)
        step = reading.stepped_since(previous)
        if "resumed" in self.kinds and slept > TOLERANCE_SECONDS:
            self._notifier.report_resumed(self.name, slept_seconds=slept)
        if "clock_changed" in self.kinds and abs(step) > TOLERANCE_SECONDS:
            self._notifier.report_clock_jump(self.name, step)
        if "timezone_changed" in self.kinds:
            self._notifier.check_zone(self.name)
