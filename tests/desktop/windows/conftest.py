"""Window fixtures: a desktop on a store with real history, planned under virtual time."""

from __future__ import annotations

import asyncio
import gc
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import qasync

from coven_core.clock import VirtualClock, WakeReason
from coven_desktop.desktop import Desktop
from tests.core.conftest import make_engine

NOW = datetime(2026, 3, 8, 12, tzinfo=UTC)


@pytest.fixture
def in_berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This computer's zone is Berlin: what windows write in local time."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def seed(data: Path) -> None:
    """Half a day of history: nightly in New York across the spring gap, every 5 minutes in
    UTC with an hour asleep."""
    clock = VirtualClock(datetime(2026, 3, 8, 1, tzinfo=UTC))
    engine = make_engine(data, clock)
    engine.add("nightly", "30 2 * * *", tz="America/New_York")
    engine.add("every5", "*/5 * * * *")
    engine.run_until(datetime(2026, 3, 8, 3, tzinfo=UTC))
    clock.suspend(timedelta(hours=1), notify=False)
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    engine.run_until(NOW)
    engine.scheduler.shutdown()
    engine.store.close()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Planned once per module (it takes seconds), copied for each test."""
    data = tmp_path_factory.mktemp("seeded") / "data"
    seed(data)
    return data


@pytest.fixture
def seeded_desktop(seeded: Path, tmp_path: Path, loop: qasync.QEventLoop) -> Iterator[Desktop]:
    """The app on a copy of the seeded store, its clock frozen at NOW."""
    data = tmp_path / "data"
    shutil.copytree(seeded, data)
    desktop = Desktop(data, VirtualClock(NOW, autojump=False))
    loop.run_until_complete(desktop.start())
    yield desktop
    gc.collect()  # here, on the GUI thread: never let a Qt object be collected on a worker's
    loop.run_until_complete(desktop.close(5))
    desktop.deleteLater()
    loop.run_until_complete(asyncio.sleep(0))


def on_signal(loop: qasync.QEventLoop, signal) -> asyncio.Future[None]:  # type: ignore[no-untyped-def]
    """A future the signal resolves (never a fixed wait)."""
    done: asyncio.Future[None] = loop.create_future()
    signal.connect(lambda *args: done.done() or done.set_result(None))
    return done
