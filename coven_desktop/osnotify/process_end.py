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

import asyncio
import os
from collections.abc import Iterable

from PySide6.QtCore import QObject, QTimer, Signal

#: How often to look again where no pidfd can be opened (milliseconds).
FALLBACK_MS = 5000


class ProcessEnds(QObject):
    """Emits :attr:`ended` once any watched process has ended (or may have). The pidfds are
    followed by the app's event loop (qasync's readers: it never drops a notifier inside its
    own signal)."""

    ended = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pids: tuple[int, ...] = ()  # what watch() was last asked for
        self._pidfds: set[int] = set()
        self._fallback = QTimer(self)
        self._fallback.setInterval(FALLBACK_MS)
        self._fallback.timeout.connect(self.ended)

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
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:  # gone before we looked
                QTimer.singleShot(0, self.ended.emit)
                continue
            except (AttributeError, OSError):  # no pidfds here
                self._fallback.start()
                continue
            asyncio.get_event_loop().add_reader(pidfd, self._ended_one, pidfd)
            self._pidfds.add(pidfd)

    def stop(self) -> None:
        self._pids = ()
        self._fallback.stop()
        for pidfd in list(self._pidfds):
            self._close(pidfd)

    def _ended_one(self, pidfd: int) -> None:
        self._close(pidfd)
        self.ended.emit()

    def _close(self, pidfd: int) -> None:
        self._pidfds.discard(pidfd)
        asyncio.get_event_loop().remove_reader(pidfd)
        os.close(pidfd)
