"""The end of processes the app did not start, without polling (DESIGN §12).

The Needs attention page shows a run whose command outlived its runner; no decision is taken
while it runs (§8), so the page must learn when it ends. On Linux (5.3 and later) each process
gets a pidfd, which becomes readable once the process has ended, followed by a
:class:`QSocketNotifier`: nothing wakes until then. Where there are no pidfds (macOS, an older
kernel) a slow timer asks the page to look again instead.

A pidfd names the process that had the pid when it was opened, which may be another one if the
pid was reused meanwhile: :attr:`ProcessEnds.ended` only says "look again", and the engine's
check (pid and start mark) decides what still runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from PySide6.QtCore import QObject, QSocketNotifier, QTimer, Signal

#: How often to look again where no pidfd can be opened (milliseconds).
FALLBACK_MS = 5000


class ProcessEnds(QObject):
    """Emits :attr:`ended` once any watched process has ended (or may have)."""

    ended = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pids: tuple[int, ...] = ()  # what watch() was last asked for
        self._watched: dict[int, QSocketNotifier] = {}  # pidfd → its notifier
        self._retired: list[QSocketNotifier] = []  # see _closed
        self._fallback = QTimer(self)
        self._fallback.setInterval(FALLBACK_MS)
        self._fallback.timeout.connect(self._say_ended)

    def watch(self, pids: Iterable[int]) -> None:
        """Watch exactly ``pids`` (none: stop watching). Asked again for the same pids, it
        changes nothing: a process that ended and is still said to run (by a check that
        cannot tell) is not reported again and again."""
        wanted = tuple(sorted(set(pids)))
        if wanted == self._pids:
            return
        self.stop()
        self._pids = wanted
        for pid in wanted:
            try:
                descriptor = os.pidfd_open(pid)
            except ProcessLookupError:  # gone before we looked
                QTimer.singleShot(0, self._say_ended)
                continue
            except (AttributeError, OSError):  # no pidfds here
                self._fallback.start()
                continue
            notifier = QSocketNotifier(descriptor, QSocketNotifier.Type.Read)
            notifier.activated.connect(lambda *_signal, fd=descriptor: self._ended_one(fd))
            self._watched[descriptor] = notifier

    def stop(self) -> None:
        self._pids = ()
        self._fallback.stop()
        self._retired.clear()
        for descriptor in list(self._watched):
            self._close(descriptor)

    def _ended_one(self, descriptor: int) -> None:
        self._close(descriptor)
        # Not inside the notifier's own signal: the page answers by watching anew.
        QTimer.singleShot(0, self._say_ended)

    def _say_ended(self) -> None:
        self.ended.emit()

    def _close(self, descriptor: int) -> None:
        notifier = self._watched.pop(descriptor, None)
        if notifier is None:
            return
        notifier.setEnabled(False)
        # Kept until the next watch(): it may be closing inside its own signal.
        self._retired.append(notifier)
        os.close(descriptor)
