"""The Quarantine window, driven through its widgets (issue #8, DESIGN §6)."""

from __future__ import annotations

import pytest
import qasync
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from coven_core.model import RoutineState
from coven_core.queries import show
from coven_desktop.desktop import Desktop
from coven_desktop.windows.quarantine import Page
from tests.desktop.helpers import add


def quarantine(desktop: Desktop, loop: qasync.QEventLoop, name: str, reason: str) -> None:
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.quarantine(name, reason)))


def state_of(desktop: Desktop, loop: qasync.QEventLoop, name: str) -> RoutineState:
    return loop.run_until_complete(
        desktop.service.call(lambda e: show(e.store, name))
    ).routine.state


@pytest.fixture
def page(desktop: Desktop, loop: qasync.QEventLoop) -> Page:
    add(desktop, loop, "fetch-mail")
    add(desktop, loop, "backup")
    quarantine(desktop, loop, "fetch-mail", "the mail server refuses the login")
    shown = desktop.window.show_page("quarantine")
    loop.run_until_complete(desktop.window.settle())
    assert isinstance(shown, Page)
    return shown


def test_lists_quarantined_routines_with_why(page: Page, qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    assert page.routine_model.rowCount() == 1
    assert page.routine_model.row(0).cells[0] == "fetch-mail"
    assert "the mail server refuses the login" in page.why.text()
    assert "1 routine(s) in quarantine" in page.headline.text()
    qtmodeltester.check(page.routine_model)
    qtmodeltester.check(page.failure_model)


def test_release_makes_it_active_again(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    qtbot.mouseClick(page.release_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(page.settle())
    assert "Released fetch-mail" in page.result.text()
    assert page.routine_model.rowCount() == 0
    assert page.headline.text() == "No routine is in quarantine."


def test_probe_runs_once_and_stays_quarantined(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    qtbot.mouseClick(page.probe_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(page.settle())
    assert "Probing fetch-mail: run run" in page.result.text()
    assert state_of(desktop, loop, "fetch-mail") is RoutineState.QUARANTINED


def test_a_refusal_is_shown_inline(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    desktop.overviewChanged.disconnect(page._on_news)  # the news has not reached it yet:
    deleted = desktop.service.call(lambda e: e.operator.delete_routine("fetch-mail"))
    loop.run_until_complete(deleted)  # deleted by another hand while the window shows it
    qtbot.mouseClick(page.release_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(page.settle())
    assert page.error.isVisible() and "fetch-mail" in page.error.text()
    assert page.routine_model.rowCount() == 0  # and it shows what is true now


def test_edit_opens_the_routines_window_and_its_editor(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    opened: list[str] = []
    routines = desktop.window.show_page("routines")
    routines.open_editor = lambda name, **_: opened.append(name)  # type: ignore[union-attr]
    desktop.window.show_page("quarantine")
    qtbot.mouseClick(page.edit_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(desktop.window.settle())
    assert desktop.window.stack.currentWidget() is routines
    assert opened == ["fetch-mail"]
