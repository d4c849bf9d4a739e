"""The Diagnostics window, driven through its widgets (issue #8; the data directory: #10)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import qasync
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from pytestqt.qtbot import QtBot

from coven_core.operations.host import record_zone_change
from coven_core.system import logfile
from coven_core.views.diagnostics import diagnostics
from coven_core.views.status import Lags
from coven_desktop.desktop import Desktop
from coven_desktop.windows.diagnostics import Page
from tests.desktop.helpers import add


@pytest.fixture
def page(desktop: Desktop, loop: qasync.QEventLoop) -> Page:
    add(desktop, loop, "backup")
    now = desktop.clock.now_utc()
    loop.run_until_complete(
        desktop.service.call(
            lambda e: record_zone_change(e.store, now, "Europe/Berlin", "America/New_York")
        )
    )
    shown = desktop.window.show_page("diagnostics")
    loop.run_until_complete(desktop.window.settle())
    assert isinstance(shown, Page)
    return shown


def test_scheduler_status_and_passes(page: Page, qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    assert page.values["role"].text() == "scheduling this store"
    assert (
        "generation 1" in page.values["leader"].text() and "alive" in page.values["leader"].text()
    )
    assert page.pass_model.rowCount() >= 1
    triggers = {page.pass_model.row(n).cells[1] for n in range(page.pass_model.rowCount())}
    assert "start" in triggers  # the startup pass, in words
    assert "planned" in page.values["queue"].text()
    qtmodeltester.check(page.pass_model)
    qtmodeltester.check(page.event_model)


def test_the_data_directory_and_its_permissions(page: Page, desktop: Desktop) -> None:
    assert page.values["data_dir"].text() == str(desktop.data_dir)
    assert page.values["permissions"].text().startswith("private to you (drwx------ 0700)")
    assert "coven.db 0600" in page.values["permissions"].text()
    assert "tz database 20" in page.values["tzdb"].text()
    assert "bundled" in page.values["tzdb"].text()  # the tests pin the tzdata package


def test_time_zone_changes_are_listed(page: Page) -> None:
    rows = [page.event_model.row(n).cells for n in range(page.event_model.rowCount())]
    assert ["the time zone changed", "from Europe/Berlin to America/New_York"] in [
        r[1:] for r in rows
    ]


def test_run_doctor_shows_a_clean_report(
    page: Page, loop: qasync.QEventLoop, qtbot: QtBot, qtmodeltester
) -> None:  # type: ignore[no-untyped-def]
    qtbot.mouseClick(page.doctor_button, Qt.MouseButton.LeftButton)
    assert not page.doctor_button.isEnabled()  # running, off the GUI thread
    loop.run_until_complete(page.settle())
    assert page.doctor_button.isEnabled()
    assert page.report is not None and page.report.ok
    assert page.doctor_summary.text().startswith("All clear at ")
    checks = {page.finding_model.row(n).cells[0] for n in range(page.finding_model.rowCount())}
    assert {"integrity", "location", "audit"} <= checks
    assert page.tabs.currentWidget() is page.doctor_tab  # the report is shown
    qtmodeltester.check(page.finding_model)


def test_a_standby_app_says_so(page: Page, desktop: Desktop) -> None:
    from dataclasses import replace

    assert desktop.overview is not None
    desktop.overview = replace(desktop.overview, standby=True)
    assert page.shown is not None
    page.show_diagnostics(page.shown)
    assert page.values["role"].text().startswith("standby: another Coven process")


def test_the_log_tab_shows_recent_lines_and_opens_the_file(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    assert page.log_view.toPlainText() == "Nothing has been logged yet."
    path = logfile.log_path(desktop.data_dir)
    path.parent.mkdir(mode=0o700)
    path.write_text(
        "2026-03-01 12:00:00 WARNING coven_core.scheduling.scheduler: pass failed, retrying\n"
    )
    loop.run_until_complete(page.reload())
    assert page.log_view.toPlainText().endswith("pass failed, retrying")
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", opened.append)
    qtbot.mouseClick(page.log_button, Qt.MouseButton.LeftButton)
    assert opened == [QUrl.fromLocalFile(str(path))]


@pytest.mark.parametrize(
    ("locale", "said"),
    [
        ("en_US", "start p50 30 milliseconds, p99 84 milliseconds (8 starts"),
        ("de_DE", "Start p50 30 Millisekunden, p99 84 Millisekunden (8 Starts"),
    ],
)
def test_a_start_lag_under_a_second_reads_in_milliseconds(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, locale: str, said: str
) -> None:
    """As ``coven status`` says it: 30 ms read as "1 second" here, a start late by a second."""
    desktop.locale = locale
    now = desktop.clock.now_utc()
    found = loop.run_until_complete(desktop.service.call(lambda e: diagnostics(e.store, now)))
    lags = Lags(None, None, 0.030477, 0.083671, 8)
    page.show_diagnostics(replace(found, status=found.status._replace(lags=lags)))
    assert said in page.values["lags"].text()


def test_the_passes_fit_a_narrow_page_and_a_cut_header_is_whole_on_hover(
    page: Page, desktop: Desktop
) -> None:
    """German headers ("Wiederhergestellt") ran the passes past the edge at 1000 px: the
    table scrolled sideways. The counts now give way, a cut header ends in "…" and its
    tooltip has it whole, as a cut cell's has."""
    desktop.window.resize(1000, 700)
    table, model = page.pass_table, page.pass_model
    shown = [table.columnWidth(c) for c in range(model.columnCount())]
    assert sum(shown) <= table.viewport().width()
    assert not table.horizontalScrollBar().isVisible()
    for column in range(model.columnCount()):
        whole = model.headerData(column, Qt.Orientation.Horizontal)
        assert (
            model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
            == whole
        )
    why = model.index(0, 1)  # a cut cell is whole on hover too ("a routine cha…")
    assert why.data() and why.data(Qt.ItemDataRole.ToolTipRole) == why.data()
