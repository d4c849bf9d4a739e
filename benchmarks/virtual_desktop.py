"""The real app under a virtual clock, for the window benchmarks (``bench_routines_page``,
``bench_week_rss``): a store with routines and their history, made by the real engine, and a
:class:`~coven_desktop.desktop.Desktop` started on it on a qasync loop, as
``tests/desktop/windows/conftest.py`` builds it for the window tests.

Commands never run: the runtime ends each the moment it starts
(:class:`~coven_core.runtime.instant.InstantRuntime`), so what is measured is the engine and
the app, not ``/bin/true``.
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from coven_core.clock import VirtualClock, WakeSignal
from coven_core.model import RevisionSpec
from coven_core.operator import Operator
from coven_core.runtime.base import Launch, Started
from coven_core.runtime.instant import InstantRuntime
from coven_core.scheduling.scheduler import Scheduler
from coven_core.store.store import Store
from coven_desktop.desktop import Desktop

#: Words routine names are made of, so that a filter keeps some rows and not others.
WORDS = ("backup", "sync", "cleanup", "report", "mail", "photos", "notes", "prune")
ZONES = ("UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo")


def daily_at_spread_times(count: int) -> list[tuple[str, RevisionSpec]]:
    """``count`` daily routines at times spread over the day, in four zones, named from
    :data:`WORDS`."""
    routines = []
    for index in range(count):
        minute = index * 7 % (24 * 60)
        schedule = f"{minute % 60} {minute // 60} * * *"
        spec = RevisionSpec(schedule, ZONES[index % len(ZONES)], ("/bin/true",))
        routines.append((f"{WORDS[index % len(WORDS)]}-{index:04d}", spec))
    return routines


def make_store(
    data_dir: Path, routines: Sequence[tuple[str, RevisionSpec]], made: datetime, now: datetime
) -> None:
    """Add ``routines`` at ``made`` and run the real scheduler until ``now`` (their history),
    then stop it: a store as the app finds it at its next start."""
    clock, wake = VirtualClock(made), WakeSignal()
    store = Store.open(data_dir, made)
    operator = Operator(store, clock, wake.set)
    for name, spec in routines:
        operator.add_routine(name, spec)
    scheduler = Scheduler(store, clock, InstantRuntime(clock, wake), wake)
    scheduler.pass_once("startup")
    while True:
        if (reason := wake.take()) is not None:
            scheduler.pass_once(reason.value)
            continue
        if scheduler.deadline is None or scheduler.deadline > now:
            break
        clock.advance_to(max(scheduler.deadline, clock.now_utc()))
        scheduler.pass_once("deadline")
    scheduler.shutdown()
    store.close()


def application() -> QApplication:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    return app


@contextmanager
def as_if_tray() -> Iterator[None]:
    """Offscreen has no tray: told there is one, ``start()`` shows the tray icon and no window
    (as on a desktop, and as bench_idle's app), and the benchmark opens what it measures."""
    available = QSystemTrayIcon.isSystemTrayAvailable
    QSystemTrayIcon.isSystemTrayAvailable = staticmethod(lambda: True)  # type: ignore[method-assign]
    try:
        yield
    finally:
        QSystemTrayIcon.isSystemTrayAvailable = available  # type: ignore[method-assign]


class ForgetfulRuntime(InstantRuntime):
    """An instant runtime that keeps no list of what it started: a week's launches, kept for
    nothing, would look like the app leaking."""

    def start(self, launch: Launch) -> Started:
        started = super().start(launch)
        self.launches.clear()
        return started


class SteppedLoop(qasync.QEventLoop):  # type: ignore[misc]
    """qasync's loop, staying the running loop between the runs a benchmark drives (as
    ``tests/desktop/conftest.py``'s): after each ``run_until_complete`` qasync processes Qt
    events once more, and a task stepped there would find no running loop."""

    def _after_run_forever(self) -> None:
        super()._after_run_forever()
        asyncio.events._set_running_loop(self)


@contextmanager
def running_desktop(data_dir: Path, clock: VirtualClock) -> Iterator[tuple[Desktop, SteppedLoop]]:
    """The app started on ``data_dir`` under ``clock``, its commands ending at once; closed,
    and its Qt objects freed on the GUI thread, at the end."""
    loop = SteppedLoop(application(), already_running=False)
    asyncio.set_event_loop(loop)
    desktop: Desktop | None = None

    def instant(_store: Store) -> InstantRuntime:
        assert desktop is not None
        return ForgetfulRuntime(clock, desktop.service.scheduler.wake)

    desktop = Desktop(data_dir, clock, runtime_factory=instant)
    with as_if_tray():
        loop.run_until_complete(desktop.start())
    try:
        yield desktop, loop
    finally:
        loop.run_until_complete(desktop.close(5))
        desktop.deleteLater()
        loop.run_until_complete(asyncio.sleep(0))
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gc.collect()  # here, on the GUI thread: never a Qt object collected on a worker
        asyncio.events._set_running_loop(None)
        loop.close()
        asyncio.set_event_loop(None)
        gc.collect()
