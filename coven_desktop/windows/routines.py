"""The Routines window (DESIGN §12): every routine with its schedule in words, zone, state,
next run and last result; add and edit with a live preview; pause, resume, run now, delete;
its runs (the Runs page, filtered); and while it runs, how long for and Cancel.

The list reloads when the engine has news (``desktop.overviewChanged``, which follows every
operator call and every pass that changed something) — never on a timer; while a routine
runs, a one-second timer moves its elapsed time on without reading anything. Actions go
through ``desktop.act``, so they are audited, wake the scheduler and refresh every view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QItemSelectionModel, QObject, QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QSplitter,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from coven_core.engine import Engine
from coven_core.model import RoutineState
from coven_core.queries import _
from coven_desktop.tasks import Tasks
from coven_desktop.windows import run_times
from coven_desktop.windows.cancelling import ask_to_cancel
from coven_desktop.windows.chips import ChipDelegate
from coven_desktop.windows.export_dialog import ExportDialog
from coven_desktop.windows.fitting import FittingTable
from coven_desktop.windows.import_dialog import ImportDialog
from coven_desktop.windows.notice import Notice
from coven_desktop.windows.routine_editor import RoutineEditor
from coven_desktop.windows.routine_model import Column, Index, RoutinesModel, on_trial
from coven_desktop.windows.routine_rows import RoutineRow, load_rows
from coven_desktop.windows.ticking import Ticker

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop


#: The widest a column of the list starts (pixels); a person can still drag it wider.
WIDEST_COLUMN = 280
#: The toolbar's less frequent actions, under "More" (each is in the rows' context menu too).
IN_MORE = frozenset({"runs", "delete", "explain", "make_live", "import", "export"})
#: The columns that give way, first the first, when the window cannot hold them all.
GIVE_WAY = (Column.STATE, Column.SCHEDULE, Column.LAST_RESULT, Column.NEXT_RUN)
#: The columns dropped, first the first, when even that leaves too little (beside the
#: editor, which shows the schedule and zone itself): the name and the state stay.
DROP = (Column.ZONE, Column.SCHEDULE, Column.LAST_RESULT, Column.NEXT_RUN)


class Page(QWidget):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desktop = desktop
        self.model = RoutinesModel(desktop.locale, self)
        self.confirmation: QMessageBox | None = None
        self.importer: ImportDialog | None = None
        self.exporter: ExportDialog | None = None
        self._tasks = Tasks()
        self._reloading = False
        self._stale = False
        self._keeping_selection = False  # a reload puts the picked row back (see _picked)
        self._ticker = Ticker(  # moves running routines' elapsed time on
            self, lambda: bool(self.model.running),
            lambda: self.model.tick(self.desktop.clock.now_utc()),
        )  # fmt: skip
        self.minutes = Ticker(  # "in 5 minutes", and "tomorrow" after midnight, though none runs
            self, lambda: True, lambda: self.model.tick(self.desktop.clock.now_utc())
        )
        self.minutes.setInterval(60_000)
        self._build()
        desktop.overviewChanged.connect(self._on_news)
        desktop.failed.connect(self._on_refused)

    # -- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        self.actions_bar = self._actions()
        top = QHBoxLayout()  # the filter beside the bar, not in it: the bar never overflows
        top.addWidget(self.actions_bar, 1)
        layout.addLayout(top)
        self.notice = Notice(self)
        layout.addWidget(self.notice)
        self._splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.table = self._table(self._splitter)
        self._filter_box(top)
        self._splitter.addWidget(self.table)
        self._editor: RoutineEditor | None = None
        layout.addWidget(self._splitter, 1)
        # Next run and Last result are the viewer's times, beside a column of other zones.
        # Said from the start: a line appearing at the first reload would lay the page out
        # again under it (bench_routines_page, "its reload").
        self.zone_caption = QLabel(self)
        layout.addWidget(self.zone_caption)
        run_times.show_times_caption(self.zone_caption, self.desktop.clock.now_utc(),
                                     self.desktop.locale)  # fmt: skip
        self._update_actions()

    @property
    def editor(self) -> RoutineEditor:
        """The form beside the list that adds and edits, built when first needed: most
        openings of the page edit nothing, and building it was most of building the page
        (bench_routines_page, "building the page")."""
        if self._editor is None:
            self._editor = RoutineEditor(self.desktop, self._splitter)
            self._editor.hide()
            self._editor.saved.connect(self._on_saved)
            self._splitter.addWidget(self._editor)
            self._splitter.setStretchFactor(0, 2)
            self._splitter.setStretchFactor(1, 3)
            # Three fifths for the form when it opens: beside it the list keeps only names and
            # states (DROP), and the form's fields and preview need the room. Added to a
            # splitter already shown, it would take its whole preferred width from the list.
            self._splitter.setSizes([2 * self._splitter.width(), 3 * self._splitter.width()])
        return self._editor

    def _table(self, parent: QWidget) -> FittingTable:
        table = FittingTable(parent, caps=dict.fromkeys(Column, WIDEST_COLUMN),
                             give_way=GIVE_WAY, drop=DROP)  # fmt: skip
        table.setAccessibleName(_("Routines"))
        self.shown = RoutineFilter(self.model, self)
        table.setModel(self.shown)
        table.setItemDelegateForColumn(Column.STATE, ChipDelegate(table))
        table.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideRight)  # never cut
        table.setSortingEnabled(True)
        table.sortByColumn(Column.NAME, Qt.SortOrder.AscendingOrder)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.verticalHeader().hide()
        table.setTabKeyNavigation(False)  # Tab leaves the table (issue #22)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        table.doubleClicked.connect(lambda _index: self.edit_selected())
        table.selectionModel().selectionChanged.connect(lambda *_: self._picked())
        for key in ("edit", "pause", "resume", "run_now", "cancel", "runs", "delete", "explain",
                    "make_live"):  # fmt: skip
            table.addAction(self.action[key])
        return table

    def _filter_box(self, row: QHBoxLayout) -> None:
        """Type part of a name or a state ("paused", "running"); Ctrl+F comes here."""
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText(_("Filter…"))
        self.filter.setToolTip(_("Part of a name or a state, e.g. paused (Ctrl+F)"))
        self.filter.setAccessibleName(_("Filter routines"))
        self.filter.setClearButtonEnabled(True)
        self.filter.setMinimumWidth(150)
        self.filter.setMaximumWidth(240)
        self.filter.textChanged.connect(self.shown.set_needle)
        row.addWidget(self.filter)
        find = QShortcut(QKeySequence.StandardKey.Find, self)
        find.activated.connect(self._find)

    def _find(self) -> None:
        self.filter.setFocus()
        self.filter.selectAll()

    def _actions(self) -> QToolBar:
        bar = QToolBar(self)
        self.action: dict[str, QAction] = {}
        entries: list[tuple[str, str, Callable[[], object]]] = [
            ("add", _("Add…"), self.open_editor),
            ("edit", _("Edit…"), self.edit_selected),
            ("pause", _("Pause"), self.pause_selected),
            ("resume", _("Resume"), self.resume_selected),
            ("run_now", _("Run now"), self.run_selected),
            ("cancel", _("Cancel run…"), self.cancel_selected),
            ("runs", _("Runs"), self.show_runs_of_selected),
            ("delete", _("Delete…"), self.delete_selected),
            ("explain", _("Explain…"), self.explain_selected),
            ("make_live", _("Make it live"), self.make_selected_live),
            ("import", _("Import…"), self.open_import),
            ("export", _("Export…"), self.open_export),
        ]
        shortcuts = {
            "edit": QKeySequence(Qt.Key.Key_Return),
            "delete": QKeySequence(QKeySequence.StandardKey.Delete),
        }
        more = QMenu(_("More"), self)
        for key, text, slot in entries:
            action = QAction(text, self)
            action.setObjectName(key)
            if key in shortcuts:
                action.setShortcut(shortcuts[key])
                action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(lambda _checked=False, run=slot: run())
            (more.addAction if key in IN_MORE else bar.addAction)(action)
            self.action[key] = action
        self.more = QToolButton(bar)  # the bar fits at 1000 px in every language (issue #22)
        self.more.setText(_("More"))
        self.more.setAccessibleName(_("More actions"))
        self.more.setMenu(more)
        self.more.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        bar.addWidget(self.more)
        return bar

    def open_import(self) -> ImportDialog:
        """The Import window (cron, systemd, launchd), non-modal; one at a time."""
        if self.importer is None:
            self.importer = ImportDialog(self.desktop, self)
            self.importer.imported.connect(self._show_imported)
        self.importer.show()
        self.importer.raise_()
        return self.importer

    def open_export(self) -> ExportDialog:
        """The Export window (systemd, Kubernetes), non-modal; one at a time, read anew."""
        if self.exporter is None:
            self.exporter = ExportDialog(self.desktop, self)
        else:
            self.exporter.read()  # the routines may have changed since it was last open
        self.exporter.show()
        self.exporter.raise_()
        return self.exporter

    def _picked(self) -> None:
        """Another row: a notice about the last one is stale. A reload that keeps the row
        picks nothing new, though its model reset empties the selection for a moment."""
        if not self._keeping_selection:
            self.notice.clear()
        self._update_actions()

    def _update_actions(self) -> None:
        row = self.selected()
        for key in ("edit", "run_now", "runs", "delete", "explain"):
            self.action[key].setEnabled(row is not None)
        self.action["cancel"].setEnabled(row is not None and row.name in self.model.running)
        self.action["pause"].setEnabled(row is not None and row.state is RoutineState.ACTIVE)
        paused = row is not None and row.state is RoutineState.PAUSED
        self.action["resume"].setEnabled(paused)
        # one place on the bar for the two: whichever the routine can take (Pause by default)
        self.action["resume"].setVisible(paused)
        self.action["pause"].setVisible(not paused)
        self.action["make_live"].setEnabled(row is not None and on_trial(row))

    # -- loading ----------------------------------------------------------------------------
    async def reload(self) -> None:
        """Read every routine on the operator thread and show them, keeping the selection."""
        locale = self.desktop.locale
        rows = await self.desktop.service.call(lambda engine: load_rows(engine, locale))
        if not shiboken6.isValid(self):
            return  # the window closed while the engine was reading
        chosen = self.selected()
        self.model.locale = locale
        overview = self.desktop.overview
        running = overview.running if overview is not None else []
        self._keeping_selection = True
        try:
            now = self.desktop.clock.now_utc()
            self.model.set_rows(rows, now, running)
            self.table.fit_to_contents()
            kept = chosen is not None and self.select(chosen.name)
        finally:
            self._keeping_selection = False
        if chosen is not None and not kept:
            self.notice.clear()  # the routine it spoke of is gone, or filtered out
        run_times.show_times_caption(self.zone_caption, now, locale)
        self._update_actions()
        self._ticker.follow()

    def _on_news(self, _overview: object) -> None:
        """Reload once per burst of news: one in flight, at most one more after it."""
        if self._reloading:
            self._stale = True
            return
        self._tasks.spawn(self._reload_until_fresh())

    async def _reload_until_fresh(self) -> None:
        self._reloading = True
        try:
            self._stale = True
            while self._stale:
                self._stale = False
                await self.reload()
        finally:
            self._reloading = False

    # -- selection --------------------------------------------------------------------------
    def selected(self) -> RoutineRow | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.row(self.shown.mapToSource(rows[0]).row()) if rows else None

    def select(self, name: str) -> bool:
        row = self.model.row_of(name)
        shown = None if row is None else self.shown.mapFromSource(self.model.index(row, 0))
        if shown is None or not shown.isValid():
            return False  # not a routine, or filtered out
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.selectionModel().select(shown, flags)
        return True

    # -- the row actions --------------------------------------------------------------------
    def open_editor(self, name: str = "", schedule: str = "", command: str = "") -> None:
        """A new routine, optionally prefilled (the welcome page's "Add your first routine")."""
        self.editor.open_for_add(name, schedule, command)

    def edit_routine(self, name: str) -> None:
        """Open ``name`` in the editor, its row chosen: another page's Edit (Quarantine)."""
        self._tasks.spawn(self._edit_routine(name))

    async def _edit_routine(self, name: str) -> None:
        await self.reload()  # a first opening has no rows yet
        if not self.select(name):
            self.filter.clear()  # a filter hid it
            if not self.select(name):
                self.notice.say(_("There is no routine named {name} now.").format(name=name))
                return
        self.edit_selected()

    def edit_selected(self) -> None:
        row = self.selected()
        if row is None:
            return
        if row.view.revision is None:  # nothing left to edit from: only delete mends it
            self._on_refused(row.view.broken or "")
            return
        self.editor.open_for_edit(row.view)

    def pause_selected(self) -> None:
        self._act_on_selected(lambda name: lambda e: e.operator.pause(name))

    def make_selected_live(self) -> None:
        """A trial routine's next revision runs its command (DESIGN §14): the same as
        ``coven routine edit NAME --live``."""
        live = lambda spec: replace(spec, shadow=False)  # noqa: E731
        self._act_on_selected(lambda name: lambda e: e.operator.edit_routine(name, live))

    def resume_selected(self) -> None:
        self._act_on_selected(lambda name: lambda e: e.operator.resume(name))

    def run_selected(self) -> None:
        """Run it now, and say so where the row alone would not: a routine running already
        shows no change (its run waits for the one going now), nor does a second click."""
        row = self.selected()
        if row is not None:
            self.notice.clear()
            busy = row.name in self.model.running
            self._tasks.spawn(self._run_now(row.name, busy))

    async def _run_now(self, name: str, busy: bool) -> None:
        ref = await self.desktop.run_now(name)
        if ref is None or not shiboken6.isValid(self):
            return  # refused: the window says why
        if ref.already_waiting:
            self.notice.say(_("A run of {name} is already waiting to start: no second one "
                              "was made.").format(name=name))  # fmt: skip
        elif busy:
            self.notice.say(_("{name} is running: this run starts when that one ends.").format(
                name=name))  # fmt: skip

    def _act_on_selected(self, work: Callable[[str], Callable[[Engine], object]]) -> None:
        row = self.selected()
        if row is not None:
            self.notice.clear()
            self.desktop.act(work(row.name))

    def cancel_selected(self) -> None:
        """Ask once, then cancel every run of the selected routine going now."""
        row = self.selected()
        if row is None or row.name not in self.model.running:
            return
        name = row.name
        self.confirmation = ask_to_cancel(
            self.desktop, self, name, lambda e: e.operator.cancel_routine(name)
        )

    def show_runs_of_selected(self) -> None:
        row = self.selected()
        if row is not None:
            self.desktop.window.show_runs(row.name)

    def delete_selected(self) -> None:
        """Ask first, without blocking: the answer arrives on the box's signal."""
        row = self.selected()
        if row is None:
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            _("Delete routine"),
            _("Delete the routine {name}? It will not run again; its history is kept.").format(
                name=row.name
            ),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.button(QMessageBox.StandardButton.Yes).setText(_("Delete"))
        box.finished.connect(lambda answer, name=row.name: self._confirmed(box, answer, name))
        self.confirmation = box
        box.open()

    def _confirmed(self, box: QMessageBox, answer: int, name: str) -> None:
        self.confirmation = None
        box.deleteLater()
        if answer == QMessageBox.StandardButton.Yes:
            self.desktop.act(lambda e: e.operator.delete_routine(name))

    def explain_selected(self) -> None:
        row = self.selected()
        if row is None:
            return
        from coven_desktop.windows.explanation import open_explanation

        open_explanation(self.desktop, row.name, parent=self)

    # -- news -------------------------------------------------------------------------------
    def _on_saved(self, name: str) -> None:
        self.show_routine(name)

    def _show_imported(self, names: list[str]) -> None:
        if names:
            self.show_routine(names[0])

    def show_routine(self, name: str) -> None:
        """Choose ``name`` once the rows have been read again (a new one is in them then)."""
        self._tasks.spawn(self._show_saved(name))

    async def _show_saved(self, name: str) -> None:
        await self.reload()
        self.select(name)

    def _on_refused(self, message: str) -> None:
        """Say why, with the way out as buttons: a quarantined routine is probed or released
        here, not by a command in a terminal."""
        row = self.selected()
        if row is not None and row.state is RoutineState.QUARANTINED:
            name, act = row.name, self.desktop.act
            self.notice.say(
                _("{name} is quarantined after repeated failures: nothing runs until "
                  "you try it once or release it.").format(name=name),
                ((_("Probe once"), lambda: act(lambda e: e.operator.probe(name))),
                 (_("Release"), lambda: act(lambda e: e.operator.release(name)))),
            )  # fmt: skip
            return
        self.notice.say(message)

    # -- tasks ------------------------------------------------------------------------------
    async def settle(self) -> None:
        """Wait for the reloads, checks and saves in flight (tests)."""
        while self._tasks or (self._editor is not None and self._editor.busy):
            await self._tasks.settle()
            if self._editor is not None:
                await self._editor.settle()


class RoutineFilter(QSortFilterProxyModel):
    """The rows whose name or state holds the typed text (case folded), in the model's
    order: sorting is passed on to the model (:meth:`RoutinesModel.sort`)."""

    def __init__(self, source: RoutinesModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSourceModel(source)
        self.needle = ""
        # Each row's words, folded once per change of the rows rather than read through the
        # model for every row at every keystroke (bench_routines_page, "filter keystroke").
        self._haystacks: list[str] | None = None
        for changed in (source.modelReset, source.dataChanged, source.rowsInserted,
                        source.rowsRemoved, source.layoutChanged):  # fmt: skip
            changed.connect(self._forget)

    def _forget(self) -> None:
        self._haystacks = None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        source = self.sourceModel()
        assert isinstance(source, RoutinesModel)
        source.sort(column, order)

    def set_needle(self, text: str) -> None:
        # Qt 6.10 replaced invalidateFilter() with begin/endFilterChange(); 6.6 has only it.
        begin = getattr(self, "beginFilterChange", None)
        if begin is not None:
            begin()
        self.needle = text.strip().casefold()
        if begin is not None:
            self.endFilterChange()
        else:
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if not self.needle:
            return True
        if self._haystacks is None:
            self._haystacks = self._fold_rows()
        return self.needle in self._haystacks[source_row]

    def _fold_rows(self) -> list[str]:
        source = self.sourceModel()
        return [
            "\n".join(
                str(source.index(row, c).data()) for c in (Column.NAME, Column.STATE)
            ).casefold()
            for row in range(source.rowCount())
        ]
