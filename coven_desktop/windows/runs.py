"""The Runs window (DESIGN §12, issue #21): every occurrence of every routine — or of one —
newest first, with how it ended; older runs load as the list is scrolled to its end (or by
"Show older runs"). A live run's elapsed time ticks, and it has a Cancel button; opening a
row opens its run detail (:mod:`.run_detail`).

Reloads on the engine's news (``desktop.overviewChanged``) while shown, keeping as many rows
as were loaded; the one-second timer only moves elapsed times on, it never reads the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from coven_core.errors import CovenError
from coven_core.queries import RunRow, _, ngettext, runs
from coven_desktop.windows import run_times
from coven_desktop.windows.cancelling import ask_to_cancel
from coven_desktop.windows.chips import ChipDelegate
from coven_desktop.windows.common import LivePage, act, error_label, show_error
from coven_desktop.windows.fitting import FittingTable
from coven_desktop.windows.run_model import CANCELLABLE, Column, RunsModel
from coven_desktop.windows.ticking import Ticker
from coven_desktop.windows.tones import Tones

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMessageBox

    from coven_desktop.desktop import Desktop

#: Rows read at a time: the first screen, and each "Show older runs".
PAGE_SIZE = 50
#: The widest a column starts (pixels); "What happened" is sure of its cap, and takes what is
#: left over. Started holds a day as well when it is not the planned one ("7. Dez., 19:21:47").
WIDEST = {Column.ROUTINE: 130, Column.PLANNED: 140, Column.STARTED: 150, Column.DURATION: 110,
          Column.WHY: 160}  # fmt: skip
#: The columns that give way, first the first, when a narrow window cannot hold them all.
GIVE_WAY = (Column.STARTED, Column.ATTEMPTS, Column.ROUTINE, Column.DURATION)


class Page(LivePage):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(desktop, parent)
        self.routine: str | None = None  # the filter: None for every routine
        self.model = RunsModel(desktop.locale, self)
        self.exhausted = False  # the oldest run is loaded
        self.confirmation: QMessageBox | None = None
        self._reloading, self._stale, self._loading_more = False, False, False
        self._ticker = Ticker(self, lambda: bool(self.model.live_rows()),
                              lambda: self.model.tick(self.desktop.clock.now_utc()))  # fmt: skip
        self._build()

    # -- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.addLayout(self._bar())
        self.error = error_label(self, Tones(self))
        layout.addWidget(self.error)
        self.empty = QLabel(_("No runs yet: each moment of a routine appears here once "
                                    "it is planned."), self)  # fmt: skip
        self.empty.setWordWrap(True)
        self.empty.hide()
        layout.addWidget(self.empty)
        self.table = self._table()
        layout.addWidget(self.table, 1)
        layout.addLayout(self._footer())
        self._update_buttons()

    def _bar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        shown = QLabel(_("&Routine:"), self)
        self.filter = QComboBox(self)
        self.filter.setAccessibleName(_("Show the runs of"))
        self.filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.filter.addItem(_("All routines"), None)
        self.filter.activated.connect(lambda _n: self.show_routine(self.filter.currentData()))
        shown.setBuddy(self.filter)
        self.zone_caption = QLabel(self)
        self.open_button = QPushButton(_("&Open…"), self)
        self.open_button.clicked.connect(self.open_selected)
        self.cancel_button = QPushButton(_("&Cancel run…"), self)
        self.cancel_button.clicked.connect(self.cancel_selected)
        for widget in (shown, self.filter, self.zone_caption):
            bar.addWidget(widget)
        bar.addStretch(1)
        bar.addWidget(self.open_button)
        bar.addWidget(self.cancel_button)
        return bar

    def _table(self) -> FittingTable:
        table = FittingTable(self, caps=WIDEST, give_way=GIVE_WAY)
        table.setModel(self.model)
        table.setAccessibleName(_("Runs"))
        table.setItemDelegateForColumn(Column.OUTCOME, ChipDelegate(table))
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setTabKeyNavigation(False)  # Tab leaves the table (issue #22)
        table.setAlternatingRowColors(True)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 12)
        table.activated.connect(lambda _index: self.open_selected())  # Enter, double-click
        table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        table.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        return table

    def _footer(self) -> QHBoxLayout:
        footer = QHBoxLayout()
        self.count = QLabel(self)
        self.more_button = QPushButton(_("Show &older runs"), self)
        self.more_button.clicked.connect(lambda: self.spawn(self.load_more()))
        self.seen_button = QPushButton(_("Mark all as &seen"), self)
        self.seen_button.setToolTip(_(
            "The failed runs in bold have not been opened yet, and the tray counts them. "
            "This stops counting them; nothing else changes."
        ))  # fmt: skip
        self.seen_button.clicked.connect(lambda: self.spawn(self.mark_all_seen()))
        footer.addWidget(self.count)
        footer.addStretch(1)
        footer.addWidget(self.seen_button)
        footer.addWidget(self.more_button)
        return footer

    # -- the filter -------------------------------------------------------------------------
    def show_routine(self, routine: str | None) -> None:
        """Show the runs of ``routine`` only (None: of every routine), from the newest."""
        self._offer(routine)
        self.filter.setCurrentIndex(max(self.filter.findData(routine), 0))
        if routine != self.routine or not self.model.rows:
            self.routine = routine
            self.table.setColumnHidden(Column.ROUTINE, routine is not None)  # it says which
            self.model.set_rows([], self.desktop.clock.now_utc())
            self.exhausted = False
            self.spawn(self.reload())

    def _offer(self, routine: str | None) -> None:
        """Keep the filter's list as the routines are, with ``routine`` in it."""
        overview = self.desktop.overview
        names = [line.name for line in overview.routines] if overview else []
        if routine is not None and routine not in names:
            names.append(routine)
        listed = [self.filter.itemData(n) for n in range(1, self.filter.count())]
        if listed != names:
            chosen = self.filter.currentData()
            while self.filter.count() > 1:
                self.filter.removeItem(1)
            for name in names:
                self.filter.addItem(name, name)
            self.filter.setCurrentIndex(max(self.filter.findData(chosen), 0))

    # -- loading ----------------------------------------------------------------------------
    async def reload(self) -> None:
        """Read as many of the newest runs as are shown (a page at least), once per burst of
        news: one read in flight, at most one more after it."""
        if self._reloading:
            self._stale = True
            return
        self._reloading, self._stale = True, True
        try:
            while self._stale and shiboken6.isValid(self):
                self._stale = False
                await self._read_newest()
        finally:
            self._reloading = False

    async def _read_newest(self) -> None:
        self._offer(self.routine)
        count = max(PAGE_SIZE, self.model.rowCount())
        routine, locale, now = self.routine, self.desktop.locale, self.desktop.clock.now_utc()
        found = await self._read(lambda e: runs(e.store, routine, count, now=now, locale=locale))
        if found is None or not shiboken6.isValid(self) or routine != self.routine:
            return
        chosen = self.selected()
        self.model.locale = locale
        self.model.set_rows(found, now)
        self.exhausted = len(found) < count
        self._shown(chosen)

    async def load_more(self) -> None:
        """The next page of older runs, after the oldest shown."""
        if self.exhausted or self._loading_more or not self.model.rows:
            return
        self._loading_more = True
        try:
            oldest, routine = self.model.rows[-1], self.routine
            locale, now = self.desktop.locale, self.desktop.clock.now_utc()
            found = await self._read(lambda e: runs(e.store, routine, PAGE_SIZE, before=oldest,
                                                    now=now, locale=locale))  # fmt: skip
            if found is None or not shiboken6.isValid(self) or routine != self.routine:
                return
            if self.model.rows and self.model.rows[-1] == oldest:  # no reload came between
                self.model.append_rows(found)
                self.exhausted = len(found) < PAGE_SIZE
            self._shown(self.selected())
        finally:
            self._loading_more = False

    async def _read(self, work) -> list[RunRow] | None:  # type: ignore[no-untyped-def]
        try:
            found: list[RunRow] = await self.desktop.service.call(work)
        except CovenError as error:
            if shiboken6.isValid(self):
                show_error(self.error, str(error))
            return None
        if shiboken6.isValid(self):
            show_error(self.error, None)
        return found

    def _shown(self, chosen: RunRow | None) -> None:
        """After new rows: cancel buttons, widths, selection, the footer and the ticker."""
        self._cancel_buttons()
        self.table.fit_to_contents()
        if chosen is not None:
            self.select(chosen.occurrence_id)
        rows = self.model.rowCount()
        self.empty.setVisible(rows == 0 and not self.error.isVisible())
        shown = ngettext("{count} run shown", "{count} runs shown", rows)
        self.count.setText(shown.format(count=rows) if rows else "")
        self.more_button.setVisible(not self.exhausted)
        now = self.desktop.clock.now_utc()
        run_times.show_times_caption(self.zone_caption, now, self.desktop.locale)
        self._ticker.follow()
        self._update_buttons()

    def _cancel_buttons(self) -> None:
        for number in self.model.live_rows():
            row = self.model.row(number)
            if row.run_id is None:
                continue
            button = QPushButton(_("Cancel…"), self.table)
            button.setAccessibleName(_("Cancel the run of {routine}").format(
                routine=row.routine))  # fmt: skip
            button.clicked.connect(lambda _checked=False, r=row: self.cancel(r))
            self.table.setIndexWidget(self.model.index(number, Column.EXIT), button)

    def _on_scrolled(self, value: int) -> None:
        bar = self.table.verticalScrollBar()
        if value >= bar.maximum() > 0 and not self.exhausted:
            self.spawn(self.load_more())

    # -- selection and actions --------------------------------------------------------------
    def selected(self) -> RunRow | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.row(rows[0].row()) if rows else None

    def select(self, occurrence_id: str) -> bool:
        number = next((n for n, row in enumerate(self.model.rows)
                       if row.occurrence_id == occurrence_id), None)  # fmt: skip
        if number is None:
            return False
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.selectionModel().setCurrentIndex(self.model.index(number, 0), flags)
        return True

    async def mark_all_seen(self) -> None:
        """Every failure counts as opened ("mark all as read"): the tray stops counting them."""
        done = await act(self.desktop, lambda engine: engine.operator.mark_all_seen())
        show_error(self.error, done.refusal)
        await self.reload()

    def _update_buttons(self) -> None:
        overview = self.desktop.overview
        self.seen_button.setEnabled(overview is not None and overview.counts.failed_unseen > 0)
        row = self.selected()
        self.open_button.setEnabled(row is not None)
        self.cancel_button.setEnabled(
            row is not None and row.run_id is not None and row.outcome in CANCELLABLE
        )

    def open_selected(self) -> None:
        row = self.selected()
        if row is not None:
            self.desktop.window.open_run(row.occurrence_id)

    def cancel_selected(self) -> None:
        row = self.selected()
        if row is not None and row.outcome in CANCELLABLE:
            self.cancel(row)

    def cancel(self, row: RunRow) -> None:
        """Ask once, then cancel this run (through ``desktop.act``)."""
        run_id = row.run_id
        if run_id is None:
            return
        self.confirmation = ask_to_cancel(
            self.desktop, self, row.routine, lambda e: e.operator.cancel(run_id)
        )
