"""The Quarantine window, driven through its widgets (issue #8, DESIGN §6)."""

from __future__ import annotations

from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractScrollArea
from pytestqt.qtbot import QtBot

from coven_core.events import EventKind
from coven_core.model import RoutineState
from coven_core.queries import show
from coven_desktop.desktop import Desktop
from coven_desktop.windows.quarantine import Page
from tests.desktop.helpers import add, wait_for_event


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
    assert "1 routine in quarantine" in page.headline.text()
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
    assert "fetch-mail" in page.result.text()  # probing it, or how the probe ended
    assert state_of(desktop, loop, "fetch-mail") is RoutineState.QUARANTINED


def test_the_probe_line_follows_the_probe_until_it_fails(
    desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    """Issue #21: "Probing … tries once now" stayed after the probe had failed."""
    go = tmp_path / "go"
    waits = f"while [ ! -e {go} ]; do sleep 0.05; done; echo 'login refused' >&2; exit 3"
    add(desktop, loop, "flaky", "/bin/sh", "-c", waits)
    quarantine(desktop, loop, "flaky", "it failed three times")
    page = desktop.window.show_page("quarantine")
    loop.run_until_complete(desktop.window.settle())
    assert isinstance(page, Page)
    qtbot.mouseClick(page.probe_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(page.settle())
    assert "Probing flaky: run run" in page.result.text()  # it waits for the go
    run_id = page.said.probe if page.said else None
    go.touch()
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    loop.run_until_complete(desktop.settle())  # the news reaches the page…
    loop.run_until_complete(page.settle())  # …which looks again
    said = page.result.text()
    assert "Probing" not in said and f"(run {run_id}) failed: " in said
    assert page.result.isVisible() and page.failure_model.rowCount() == 1
    outcome = page.failure_model.row(0).cells[1]
    assert outcome == "failed"  # not "failed (command failed)": the class adds nothing here
    assert state_of(desktop, loop, "flaky") is RoutineState.QUARANTINED


def test_a_line_about_one_routine_clears_when_another_is_picked(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    quarantine(desktop, loop, "backup", "the disk is full")
    loop.run_until_complete(page.reload())
    backup = next(n for n, q in enumerate(page.routines) if q.name == "backup")
    page.routine_view.selectRow(backup)
    qtbot.mouseClick(page.probe_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(page.settle())
    assert page.result.isVisible() and "backup" in page.result.text()
    loop.run_until_complete(page.reload())  # news: the page picks the same routine again
    assert page.result.isVisible()
    other = page.routine_view.visualRect(page.routine_model.index(1 - backup, 0)).center()
    qtbot.mouseClick(page.routine_view.viewport(), Qt.MouseButton.LeftButton, pos=other)
    assert not page.result.isVisible() and page.said is None


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


def test_edit_opens_the_routine_as_stored_in_the_routines_editor(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    """It opened a new routine's form with only the name filled in, so saving it was refused
    as a duplicate and nothing of the stored routine could be mended there."""
    stored = loop.run_until_complete(
        desktop.service.call(lambda e: show(e.store, "fetch-mail").revision.spec)
    )
    qtbot.mouseClick(page.edit_button, Qt.MouseButton.LeftButton)
    routines = desktop.window.pages["routines"]
    loop.run_until_complete(routines.settle())
    assert desktop.window.stack.currentWidget() is routines
    editor = routines.editor
    assert editor.isVisible() and editor.editing is not None
    assert editor.editing.routine.name == "fetch-mail"
    assert (editor.name.text(), editor.schedule.text()) == ("fetch-mail", stored.schedule)
    assert routines.selected().name == "fetch-mail"
    editor.schedule.setText("*/30 * * * *")  # mend it here, then release it there
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(routines.settle())
    edited = loop.run_until_complete(
        desktop.service.call(lambda e: show(e.store, "fetch-mail").revision.spec)
    )
    assert edited.schedule == "*/30 * * * *" and edited.argv == stored.argv


def test_it_fits_1000_by_700_without_scrolling_sideways(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    desktop.window.resize(1000, 700)
    desktop.window.show()
    loop.run_until_complete(page.reload())
    assert page.minimumSizeHint().width() <= page.width()
    for area in page.findChildren(QAbstractScrollArea):
        assert not area.horizontalScrollBar().isVisible(), area.accessibleName()
    assert page.routine_view.columnWidth(0) >= page.fontMetrics().horizontalAdvance("fetch-mail")
