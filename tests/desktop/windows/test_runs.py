"""The Runs window (issue #21) on the real app: every routine's runs newest first, filtered to
one, older ones on demand, live on the engine's news, a running run with its Cancel button."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractScrollArea, QMessageBox, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from coven_core.events import EventKind
from coven_desktop.desktop import Desktop
from coven_desktop.windows.chips import ChipRole
from coven_desktop.windows.fitting import FittingTable
from coven_desktop.windows.run_detail import RunDetailWindow
from coven_desktop.windows.run_model import Column
from coven_desktop.windows.runs import PAGE_SIZE, Page
from tests.desktop.helpers import wait_for_event
from tests.desktop.windows.running import quiet, row_of, run_once, start

FAILS = ("/bin/sh", "-c", "echo 'no route to host' >&2; exit 2")


def shown(desktop: Desktop, loop: qasync.QEventLoop) -> Page:
    desktop.locale = "en_US"
    page = desktop.window.show_page("runs")
    assert isinstance(page, Page)
    settle(loop, desktop, page)
    return page


def settle(loop: qasync.QEventLoop, desktop: Desktop, page: Any) -> None:
    quiet(loop, desktop, page)


def two_runs(desktop: Desktop, loop: qasync.QEventLoop) -> None:
    """backup succeeded, then a minute later fetch-mail failed."""
    run_once(desktop, loop, "backup", "/bin/true")
    desktop.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
    run_once(desktop, loop, "fetch-mail", *FAILS)


def cells(page: Page, column: Column) -> list[str]:
    model = page.model
    return [model.data(model.index(n, column)) for n in range(model.rowCount())]


def test_every_routines_runs_newest_first_with_how_each_ended(
    desktop: Desktop, loop: qasync.QEventLoop, qtmodeltester
) -> None:  # type: ignore[no-untyped-def]
    two_runs(desktop, loop)
    page = shown(desktop, loop)
    assert cells(page, Column.ROUTINE) == ["fetch-mail", "backup"]
    assert cells(page, Column.OUTCOME) == ["Failed", "Succeeded"]
    assert cells(page, Column.EXIT) == ["2", "0"]
    assert cells(page, Column.ATTEMPTS) == ["1", "1"]
    # why it failed, at a glance: what the command said last on stderr (the chip and the
    # exit say it failed; the whole sentence is the tooltip)
    assert cells(page, Column.WHY) == ["no route to host", "Succeeded"]
    why = page.model.index(0, Column.WHY)
    assert why.data(Qt.ItemDataRole.ToolTipRole) == "Failed with exit 2: no route to host"
    model = page.model
    assert model.data(model.index(0, Column.OUTCOME), ChipRole) == "failed"
    # Both were asked for by hand (Run now): no moment of the schedule, and the cell says so.
    assert cells(page, Column.PLANNED) == ["By hand", "By hand"]
    planned = model.data(model.index(0, Column.PLANNED), Qt.ItemDataRole.ToolTipRole)
    assert planned.startswith("Asked for by hand at ")
    scheduled = replace(model.rows[0], kind="scheduled")  # the same run, had it been planned
    assert model.text(scheduled, Column.PLANNED) != "By hand"
    assert "(UTC)" in model._tooltip(scheduled, Column.PLANNED)  # the routine's clock, named
    qtmodeltester.check(model)


def test_a_routines_runs_action_shows_only_its_runs(
    desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    two_runs(desktop, loop)
    routines = desktop.window.show_page("routines")
    settle(loop, desktop, routines)  # type: ignore[arg-type]
    assert routines.select("backup")  # type: ignore[union-attr]
    routines.action["runs"].trigger()  # type: ignore[union-attr]
    page = desktop.window.pages["runs"]
    assert isinstance(page, Page) and desktop.window.stack.currentWidget() is page
    settle(loop, desktop, page)
    assert page.filter.currentText() == "backup"
    assert cells(page, Column.ROUTINE) == ["backup"]
    assert page.table.isColumnHidden(Column.ROUTINE)  # the filter says whose runs they are
    page.filter.setCurrentIndex(page.filter.findData(None))
    page.filter.activated.emit(page.filter.currentIndex())  # as a person's choice does
    settle(loop, desktop, page)
    assert cells(page, Column.ROUTINE) == ["fetch-mail", "backup"]


def test_older_runs_load_after_the_newest_without_gaps(
    seeded_desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    page = shown(seeded_desktop, loop)
    assert page.model.rowCount() == PAGE_SIZE and page.more_button.isVisible()
    qtbot.mouseClick(page.more_button, Qt.MouseButton.LeftButton)
    settle(loop, seeded_desktop, page)
    rows = page.model.rows
    assert len(rows) == 2 * PAGE_SIZE
    assert len({row.occurrence_id for row in rows}) == len(rows)
    planned = [row.planned_utc for row in rows]
    assert planned == sorted(planned, reverse=True)
    page.table.verticalScrollBar().setValue(page.table.verticalScrollBar().maximum())
    settle(loop, seeded_desktop, page)  # scrolled to the end: the next page
    assert page.model.rowCount() > 2 * PAGE_SIZE


def test_the_list_follows_the_engines_news(desktop: Desktop, loop: qasync.QEventLoop) -> None:
    page = shown(desktop, loop)
    assert page.model.rowCount() == 0 and page.empty.isVisible()
    run_once(desktop, loop, "backup", "/bin/true")  # its news reaches the page shown
    settle(loop, desktop, page)
    assert cells(page, Column.OUTCOME) == ["Succeeded"] and not page.empty.isVisible()


def test_a_running_run_has_a_cancel_button_that_asks_once(
    desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    occurrence = start(desktop, loop, "sleeper", "/bin/sh", "-c", "exec sleep 60")
    page = shown(desktop, loop)
    assert cells(page, Column.OUTCOME) == ["Running"]
    button = page.table.indexWidget(page.model.index(0, Column.EXIT))
    assert isinstance(button, QPushButton) and button.accessibleName()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    box = page.confirmation
    assert isinstance(box, QMessageBox) and box.isVisible()
    box.button(QMessageBox.StandardButton.Yes).click()
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    settle(loop, desktop, page)
    assert row_of(desktop, loop, occurrence).outcome == "cancelled"
    assert cells(page, Column.OUTCOME) == ["Cancelled"]
    assert page.table.indexWidget(page.model.index(0, Column.EXIT)) is None


def test_opening_a_row_opens_its_detail(
    desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    occurrence = run_once(desktop, loop, "backup", "/bin/true")
    page = shown(desktop, loop)
    assert page.select(occurrence) and page.open_button.isEnabled()
    with qtbot.waitSignal(desktop.window.runOpened) as opened:
        qtbot.keyClick(page.table, Qt.Key.Key_Return)
    window = opened.args[0]
    assert isinstance(window, RunDetailWindow) and window.identifier == occurrence
    loop.run_until_complete(window.settle())
    window.close()


def test_unseen_failures_are_bold_and_mark_all_as_seen_stops_the_tray_counting_them(
    desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    """The engine had mark_all_seen and nothing offered it: fifty failures after a week
    away meant fifty windows to open before the tray stopped saying "error"."""
    desktop.window.resize(1000, 680)  # the columns all fit: none gives way to the bold ones
    two_runs(desktop, loop)
    desktop.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
    run_once(desktop, loop, "sync-notes", *FAILS)
    page = shown(desktop, loop)
    model = page.model
    bold = [model.data(model.index(n, Column.WHY), Qt.ItemDataRole.FontRole)
            for n in range(model.rowCount())]  # fmt: skip
    assert [font is not None and font.bold() for font in bold] == [True, True, False]
    assert desktop.overview is not None and desktop.overview.counts.failed_unseen == 2
    assert page.seen_button.isEnabled()
    fitted = [page.table.columnWidth(column) for column in Column]
    qtbot.mouseClick(page.seen_button, Qt.MouseButton.LeftButton)
    settle(loop, desktop, page)
    assert desktop.overview.counts.failed_unseen == 0  # the tray's count, from the engine
    assert [model.data(model.index(n, Column.WHY), Qt.ItemDataRole.FontRole)
            for n in range(model.rowCount())] == [None, None, None]  # fmt: skip
    # Only the last column is bold: bolder times and names widened their fitted columns and
    # squeezed the routine's name to "sync-…" (seen in the German demo picture).
    assert [page.table.columnWidth(column) for column in Column] == fitted
    assert not page.seen_button.isEnabled()
    assert cells(page, Column.OUTCOME) == ["Failed", "Failed", "Succeeded"]  # nothing else


@pytest.mark.parametrize("locale", ["en_US", "de_DE"])
def test_the_pages_fit_a_1000_by_700_window(
    seeded_desktop: Desktop, loop: qasync.QEventLoop, locale: str
) -> None:
    """No page widens the window, and none of the pages here scrolls sideways (issue #22)."""
    seeded_desktop.locale = locale
    window = seeded_desktop.window
    window.resize(1000, 700)
    window.show()
    for key in ("routines", "runs", "timeline", "diagnostics"):
        page = window.show_page(key)
        settle(loop, seeded_desktop, page)
        assert_fits(window, page, key)
    window.show_runs("nightly")  # filtered: one column fewer, the rest share its width
    settle(loop, seeded_desktop, window.pages["runs"])
    assert_fits(window, window.pages["runs"], "runs of nightly")
    window.open_run(page_rows(window)[0])
    detail = window.run_windows[page_rows(window)[0]]
    loop.run_until_complete(detail.settle())  # type: ignore[attr-defined]
    assert detail.width() <= 1000 and detail.height() <= 700
    detail.close()


def assert_fits(window: QWidget, page: Any, key: str) -> None:
    assert window.width() <= 1000, key
    for area in page.findChildren(QAbstractScrollArea):
        if area.isVisible():
            assert not area.horizontalScrollBar().isVisible(), (key, area)
    for table in page.findChildren(FittingTable):  # no column runs past the edge either
        shown = [table.columnWidth(c) for c in range(table.model().columnCount())
                 if not table.isColumnHidden(c)]  # fmt: skip
        assert sum(shown) <= table.viewport().width(), (key, shown)


def page_rows(window) -> list[str]:  # type: ignore[no-untyped-def]
    return [row.occurrence_id for row in window.pages["runs"].model.rows]
