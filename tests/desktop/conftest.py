"""Desktop fixtures shared by the app's tests: a qasync loop and the real app on a temp store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import qasync

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
