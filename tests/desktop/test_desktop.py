"""The real app object on a temp store: tray clicks go through the operator API (issue #7)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from coven_core import audit
from coven_core.clock import VirtualClock
from coven_core.events import Event, EventKind
from coven_core.model import RevisionSpec
from coven_desktop.desktop import Desktop
from coven_desktop.instance import InstanceServer, server_name

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


def add(desktop: Desktop, loop: qasync.QEventLoop, name: str, *argv: str) -> None:
    spec = RevisionSpec(schedule="@yearly", timezone="UTC", argv=argv or ("/bin/true",))
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.add_routine(name, spec)))
    loop.run_until_complete(desktop.refresh())


def menu_action(desktop: Desktop, text: str, submenu: str | None = None):  # type: ignore[no-untyped-def]
    menu = desktop.tray.menu
    if submenu is not None:
        menu = next(a.menu() for a in menu.actions() if a.menu() and a.text() == submenu)
        menu.aboutToShow.emit()  # submenus are filled when they open
    return next(a for a in menu.actions() if a.text() == text)


def wait_for_event(desktop: Desktop, loop, predicate, timeout: float = 20.0) -> Event:  # type: ignore[no-untyped-def]
    """Resolve on the bridge's signal (never a fixed wait)."""
    found: asyncio.Future[Event] = loop.create_future()

    def look(events: list[Event]) -> None:
        for event in events:
            if predicate(event) and not found.done():
                found.set_result(event)

    desktop.service.eventsArrived.connect(look)
    try:
        return loop.run_until_complete(asyncio.wait_for(found, timeout))
    finally:
        desktop.service.eventsArrived.disconnect(look)


def test_no_tray_offscreen_so_the_window_opens(desktop: Desktop) -> None:
    assert desktop.window.isVisible()
    assert desktop.overview is not None and desktop.overview.state.value == "idle"


def test_pause_from_the_tray_menu_is_done_and_audited(desktop: Desktop, loop) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup")
    menu_action(desktop, "Pause", submenu="backup").trigger()
    loop.run_until_complete(desktop.settle())

    def check(engine):  # type: ignore[no-untyped-def]
        state = engine.store.conn.execute("SELECT state FROM routines").fetchone()[0]
        with engine.store.read() as conn:
            latest = audit.entries(conn, limit=1)[0]
        return state, latest.action, latest.target, latest.result

    assert loop.run_until_complete(desktop.service.call(check)) == (
        "paused",
        "pause",
        "backup",
        "ok",
    )
    assert menu_action(desktop, "Resume", submenu="backup") is not None


def test_cancel_from_the_tray_stops_a_real_command(desktop: Desktop, loop) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "slow", "/bin/sleep", "30")
    menu_action(desktop, "Run now", submenu="slow").trigger()
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.STARTED)
    loop.run_until_complete(desktop.refresh())
    menu_action(desktop, "Cancel slow (running)").trigger()
    settled = wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    assert settled.data["disposition"] == "cancelled"


def test_a_second_launch_hands_over_and_exits(qtbot: QtBot, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    server = InstanceServer(server_name(data))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    with qtbot.waitSignal(server.activated, timeout=20000) as activated:
        second = subprocess.Popen(
            [sys.executable, "-m", "coven_desktop.app", "--data-dir", str(data)], env=env
        )
    assert second.wait(20) == 0
    assert activated.args == [["--data-dir", str(data)]]
    server.close()
