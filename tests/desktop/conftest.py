"""Desktop fixtures: a qasync loop on the test's QApplication, and the real app on a temp store
under virtual time (shared by every desktop test)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QCoreApplication, QEvent

from coven_core.clock import VirtualClock
from coven_desktop.desktop import Desktop

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class _TestLoop(qasync.QEventLoop):
    """qasync's loop, staying the running loop between the runs a test drives.

    Tests run the loop in steps (``run_until_complete``), and between them Qt still
    processes events: qasync itself does once more after each run, and pytest-qt after each
    test. A task stepped there — the bridge catching up on a pass's news, a page reloading —
    would fail with "no running event loop" and its news would be lost. The app never
    stops its loop, so only tests see this. (``QEventLoop.__init__`` already makes the loop
    the running one; this keeps it so after each run.)
    """

    def _after_run_forever(self) -> None:
        super()._after_run_forever()
        asyncio.events._set_running_loop(self)


@pytest.fixture
def loop(qapp) -> Iterator[qasync.QEventLoop]:  # type: ignore[no-untyped-def]
    event_loop = _TestLoop(qapp, already_running=False)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    asyncio.events._set_running_loop(None)
    event_loop.close()  # while the QApplication still exists
    asyncio.set_event_loop(None)
    # The closed loop's timer object (qasync's _SimpleTimer, a QObject with live timers)
    # is left in a reference cycle. Collect it here, on the GUI thread: collected later by
    # a garbage-collection pass that happens to run on an engine thread, its destructor
    # warns "Timers cannot be stopped from another thread" — in some other test.
    gc.collect()


@pytest.fixture
def desktop(tmp_path: Path, loop: qasync.QEventLoop) -> Iterator[Desktop]:
    built = Desktop(tmp_path / "data", VirtualClock(T0, autojump=False))
    loop.run_until_complete(built.start())
    yield built
    loop.run_until_complete(built.close(5))
    built.deleteLater()
    loop.run_until_complete(asyncio.sleep(0))  # let Qt run the deferred deletes
    # …all of them, and free the Python side of the widgets here, on the GUI thread: a
    # garbage collection that a worker thread happens to start must not destroy them.
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
