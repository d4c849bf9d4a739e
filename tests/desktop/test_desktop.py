"""The real app object on a temp store: tray clicks go through the operator API (issue #7)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pytestqt.qtbot import QtBot

from coven_core import queries
from coven_core.events import EventKind
from coven_core.integrity import audit
from coven_desktop.desktop import Desktop
from coven_desktop.instance import InstanceServer, server_name
from tests.desktop.helpers import add, wait_for_event


def menu_action(desktop: Desktop, text: str, submenu: str | None = None):  # type: ignore[no-untyped-def]
    menu = desktop.tray.menu
    if submenu is not None:
        menu = next(a.menu() for a in menu.actions() if a.menu() and a.text() == submenu)
        menu.aboutToShow.emit()  # submenus are filled when they open
    return next(a for a in menu.actions() if a.text() == text)


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
    assert settled.data["disposition"] == "cancelled", settled.data


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


def test_needs_attention_in_the_tray_opens_that_window(desktop: Desktop, loop) -> None:  # type: ignore[no-untyped-def]
    desktop.tray.attentionRequested.emit()
    loop.run_until_complete(desktop.window.settle())
    window = desktop.window
    assert window.stack.currentWidget() is window.pages["reconciliation"]
    assert window.isVisible()


def test_one_click_reads_the_overview_once(desktop: Desktop, loop, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A click's news (its events) and its own refresh share one read of the overview."""
    add(desktop, loop, "backup")
    loop.run_until_complete(desktop.service.refresh())  # the addition's news, delivered now
    loop.run_until_complete(desktop.settle())
    reads, shown = [], []
    read = queries.overview

    def counted(*args: object) -> object:
        reads.append(args)
        return read(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(queries, "overview", counted)
    desktop.overviewChanged.connect(shown.append)
    menu_action(desktop, "Pause", submenu="backup").trigger()
    loop.run_until_complete(desktop.settle())
    assert (len(reads), len(shown)) == (1, 1)
    assert shown[0].routines[0].state.value == "paused"
