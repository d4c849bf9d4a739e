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


@pytest.fixture
def loop(qapp) -> Iterator[qasync.QEventLoop]:  # type: ignore[no-untyped-def]
    event_loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    event_loop.close()  # while the QApplication still exists
    asyncio.set_event_loop(None)


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
