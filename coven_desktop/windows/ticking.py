"""Elapsed times that move on: a one-second timer that runs while its widget is shown and
something is running, and only repaints — it never reads the store (the engine's news does
that)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class Ticker(QTimer):
    def __init__(self, widget: QWidget, live: Callable[[], bool], tick: Callable[[], None]) -> None:
        """``live``: whether anything shown is running; ``tick``: move its time on."""
        super().__init__(widget)
        self._widget, self._live, self._tick = widget, live, tick
        self.setInterval(1000)
        self.timeout.connect(self._fire)
        widget.installEventFilter(self)

    def follow(self) -> None:
        """Run while the widget is shown and something in it runs (call after new data)."""
        if self._live() and self._widget.isVisible():
            self.start()
        else:
            self.stop()

    def _fire(self) -> None:
        if self._widget.isVisible():
            self._tick()
        else:
            self.stop()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._widget and event.type() == QEvent.Type.Show:
            self.follow()
        return False
