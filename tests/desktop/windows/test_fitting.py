"""A table beside an editor drops the columns a person can do without, rather than cut every
column to "…", and shows them again when there is room (issue 22)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from coven_desktop.windows.fitting import NARROWEST, FittingTable

TEXTS = ("nightly-report", "Every Monday to Friday at 9:00 AM", "America/New_York",
         "Quarantined (3 consecutive failures)", "tomorrow 8:30 AM, in 18 hours",
         "Succeeded, 8 hours ago")  # fmt: skip
NAME, SCHEDULE, ZONE, STATE, NEXT, LAST = range(6)


@pytest.fixture
def parent(qtbot: QtBot) -> QWidget:
    widget = QWidget()
    qtbot.addWidget(widget)
    return widget


def table_of(parent: QWidget, width: int) -> FittingTable:
    model = QStandardItemModel(parent)
    model.appendRow([QStandardItem(text) for text in TEXTS])
    table = FittingTable(parent, caps=dict.fromkeys(range(6), 280),
                         give_way=(STATE, SCHEDULE, LAST, NEXT),
                         drop=(ZONE, SCHEDULE, LAST, NEXT))  # fmt: skip
    table.setModel(model)
    table.resize(width, 200)
    parent.show()
    table.fit_to_contents()
    return table


def shown(table: FittingTable) -> list[int]:
    return [c for c in range(6) if not table.isColumnHidden(c)]


def test_a_narrow_table_drops_columns_in_order_and_a_wide_one_shows_them_again(
    parent: QWidget,
) -> None:
    table = table_of(parent, 1400)
    assert shown(table) == [NAME, SCHEDULE, ZONE, STATE, NEXT, LAST]
    table.resize(360, 200)
    assert shown(table) == [NAME, STATE, NEXT]
    assert all(table.columnWidth(c) >= NARROWEST for c in shown(table))
    table.resize(1400, 200)
    assert shown(table) == [NAME, SCHEDULE, ZONE, STATE, NEXT, LAST]


def test_the_last_shown_column_reaches_the_edge_and_a_column_the_owner_hid_stays_hidden(
    parent: QWidget,
) -> None:
    table = table_of(parent, 360)
    table.setColumnHidden(NAME, True)  # as the Runs page hides the routine of a routine's runs
    table.fit_to_contents()
    table.resize(1400, 200)
    assert table.isColumnHidden(NAME)
    table.resize(600, 200)
    edge = table.viewport().width()
    last = shown(table)[-1]
    assert table.columnViewportPosition(last) + table.columnWidth(last) == edge


def _turns() -> None:
    """Qt's posted events and due timers, a few turns over; no waiting for time to pass."""
    for _ in range(3):
        QCoreApplication.processEvents()


class Paints(QObject):
    """Counts a widget's paints."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        self.count += event.type() == QEvent.Type.Paint
        return False


def test_new_rows_fitted_are_painted_once(parent: QWidget, qtbot: QtBot) -> None:
    """Resized columns and the new rows' layout are one change: a reload of the Routines
    page painted its 1,000 rows twice (bench_routines_page, "its reload")."""
    table = table_of(parent, 900)
    qtbot.waitExposed(parent)
    _turns()  # the first paints are done
    model = table.model()
    assert isinstance(model, QStandardItemModel)
    paints = Paints(table.viewport())
    model.removeRows(0, model.rowCount())
    for row in range(200):  # new rows, wider than the old: every column is resized
        model.appendRow([QStandardItem(f"{text} {row}") for text in TEXTS])
    table.fit_to_contents()
    _turns()  # what Qt leaves for later (zero timers, posted events) has run
    assert paints.count == 1


def test_a_cell_too_long_for_its_column_is_cut_on_one_line_not_wrapped(parent: QWidget) -> None:
    """Wrapped at its spaces in a one-line row, a cell showed only its first words
    ("fetchmail: …", the Runs page's What happened); cut at the edge, it shows all that fits."""
    table = table_of(parent, 360)
    assert not table.wordWrap()
    assert table.textElideMode() is Qt.TextElideMode.ElideRight
