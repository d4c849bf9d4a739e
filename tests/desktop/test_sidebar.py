"""The side bar (issue #22): icons, live counts of what waits for the person, Welcome only
until the first routine exists, and Ctrl+1… / Ctrl+N from anywhere in the window."""

from __future__ import annotations

import pytest
import qasync
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from coven_core.model import RevisionSpec
from coven_desktop.app_window import MainWindow
from coven_desktop.desktop import Desktop
from coven_desktop.windows import PAGES


def add(desktop: Desktop, loop: qasync.QEventLoop, name: str) -> None:
    spec = RevisionSpec(schedule="@yearly", timezone="UTC", argv=("/bin/true",))
    loop.run_until_complete(desktop.act(lambda e: e.operator.add_routine(name, spec)))


def row_text(desktop: Desktop, key: str) -> str:
    row = [info.key for info in PAGES].index(key)
    item = desktop.window.sidebar.item(row)
    assert item is not None
    return item.text()


def test_every_row_has_an_icon(desktop: Desktop) -> None:
    sidebar = desktop.window.sidebar
    assert all(not sidebar.item(row).icon().isNull() for row in range(sidebar.count()))  # type: ignore[union-attr]


def test_a_quarantined_routine_is_counted_on_its_row(
    desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    add(desktop, loop, "sync")
    assert row_text(desktop, "quarantine") == "Quarantine"
    loop.run_until_complete(desktop.act(lambda e: e.operator.quarantine("sync", "by hand")))
    assert row_text(desktop, "quarantine") == "Quarantine  (1)"
    assert desktop.window.sidebar.item(5).font().bold()  # type: ignore[union-attr]
    loop.run_until_complete(desktop.act(lambda e: e.operator.release("sync")))
    assert row_text(desktop, "quarantine") == "Quarantine"


def test_welcome_goes_once_a_routine_exists(desktop: Desktop, loop: qasync.QEventLoop) -> None:
    sidebar = desktop.window.sidebar
    assert not sidebar.item(0).isHidden()  # type: ignore[union-attr]
    desktop.window.show_page("routines")
    add(desktop, loop, "backup")
    assert sidebar.item(0).isHidden()  # type: ignore[union-attr]


@pytest.fixture
def window(desktop: Desktop, qtbot: QtBot) -> MainWindow:
    """The main window, shown: its shortcuts take keys."""
    desktop.window.show()
    qtbot.waitExposed(desktop.window)
    return desktop.window


def test_ctrl_and_a_number_opens_that_page_and_ctrl_n_a_new_routine(
    window: MainWindow, qtbot: QtBot
) -> None:
    qtbot.keyClick(window, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    assert window.stack.currentWidget() is window.pages["timeline"]
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    routines = window.pages["routines"]
    assert window.stack.currentWidget() is routines
    assert routines.editor.isVisible()  # type: ignore[attr-defined]


def test_the_numbers_count_the_rows_shown(
    desktop: Desktop, window: MainWindow, qtbot: QtBot, loop: qasync.QEventLoop
) -> None:
    """Once Welcome is gone, Ctrl+1 is Routines and Ctrl+3 the Timeline, as the bar reads."""
    window.show_page("routines")
    add(desktop, loop, "backup")
    assert window.sidebar.isRowHidden(0)
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert window.stack.currentWidget() is window.pages["timeline"]
    qtbot.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert window.stack.currentWidget() is window.pages["routines"]
