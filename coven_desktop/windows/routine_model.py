"""The Routines window's table: one row per routine, six columns of text for people (the
zone by its key, named in full in its tooltip, so the six fit 1000 pixels); a
routine with a run going says for how long (:meth:`RoutinesModel.tick` moves it on).

The model keeps its rows in the order the table shows (:meth:`RoutinesModel.sort`); the
filter above it only hides rows."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QStyle

from coven_core import queries
from coven_core.model import RoutineState
from coven_core.queries import RunningRun, _
from coven_desktop import texts
from coven_desktop.windows import run_times
from coven_desktop.windows.chips import BIN, CHIP_ICON_ROLE, EYE, ChipRole
from coven_desktop.windows.routine_rows import RoutineRow, ago, instant_text

Index = QModelIndex | QPersistentModelIndex

#: The routine's name, for any cell (the page acts on the selected row's name).
NameRole = Qt.ItemDataRole.UserRole + 1
IconRole = CHIP_ICON_ROLE

#: The State chip's icon: a themed one, the style's own where the desktop has no theme;
#: the trial's and the deleted one's are drawn (:data:`chips.DRAWN`).
STATE_ICONS: dict[str, tuple[str, QStyle.StandardPixmap | None]] = {
    "active": ("emblem-default", QStyle.StandardPixmap.SP_DialogApplyButton),
    "running": ("media-playback-start", QStyle.StandardPixmap.SP_MediaPlay),
    "paused": ("media-playback-pause", QStyle.StandardPixmap.SP_MediaPause),
    "quarantined": ("dialog-error", QStyle.StandardPixmap.SP_MessageBoxCritical),
    "broken": ("dialog-warning", QStyle.StandardPixmap.SP_MessageBoxWarning),
    "trial": (EYE, None),
    "deleted": (BIN, None),
}
_NEVER = float("inf")


def on_trial(row: RoutineRow) -> bool:
    """A trial (shadow) routine: every moment decided as if live, the command never started."""
    return row.view.revision is not None and row.view.revision.spec.shadow


class Column(enum.IntEnum):
    NAME = 0
    SCHEDULE = 1
    ZONE = 2
    STATE = 3
    NEXT_RUN = 4
    LAST_RESULT = 5


_COLUMNS = tuple(Column)
#: The roles :meth:`RoutinesModel.data` answers.
_ANSWERED = frozenset(
    int(role)
    for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, NameRole, ChipRole,
                 IconRole)
)  # fmt: skip


class RoutinesModel(QAbstractTableModel):
    def __init__(self, locale: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._locale = locale
        # Each cell's text, kept while what it is made of holds: the rows and their order,
        # the clock, the runs going and the locale; any of them changing empties it. A paint
        # asks each cell in view for its text several times, and the times' words went
        # through Babel every time (bench_routines_page, "painting it", "filter keystroke").
        self._texts: dict[tuple[int, int], str] = {}
        self._rows: list[RoutineRow] = []  # in the order shown
        self._read: list[RoutineRow] = []  # in the order read (by name): ties keep it
        self._order = (Column.NAME, Qt.SortOrder.AscendingOrder)
        self._now: datetime | None = None
        self.running: dict[str, list[RunningRun]] = {}  # routine name -> its runs going now
        self._headers = {
            Column.NAME: _("Name"),
            Column.SCHEDULE: _("Schedule"),
            Column.ZONE: _("Time zone"),
            Column.STATE: _("State"),
            Column.NEXT_RUN: _("Next run"),
            Column.LAST_RESULT: _("Last result"),
        }
        self._states = {
            RoutineState.ACTIVE: _("Active"),
            RoutineState.PAUSED: _("Paused"),
            RoutineState.QUARANTINED: _("Quarantined"),
            RoutineState.DELETED: _("Deleted"),
        }
        self._dispositions = {
            "succeeded": _("Succeeded"),
            "failed": _("Failed"),
            "cancelled": _("Cancelled"),
            "timed_out": _("Timed out"),
            "skipped": _("Skipped"),
            "recovery_required": _("Needs your decision"),
            "reconciled": _("Decided by a person"),
            "shadowed": _("Trial (not started)"),
        }
        self._decided = {"succeeded": _("Marked as succeeded"), "failed": _("Marked as failed")}

    # -- content ----------------------------------------------------------------------------
    @property
    def locale(self) -> str:
        return self._locale

    @locale.setter
    def locale(self, locale: str) -> None:
        self._locale = locale
        self._texts.clear()

    def set_rows(
        self, rows: list[RoutineRow], now: datetime, running: list[RunningRun] | None = None
    ) -> None:
        self.beginResetModel()
        self._read, self._now = list(rows), now
        self._texts.clear()
        self.running = {}
        for run in running or []:
            self.running.setdefault(run.routine, []).append(run)
        self._rows = self._sorted()
        self.endResetModel()

    # Sorted here, by one key per row, rather than by a sorting proxy: the proxy asked the
    # model for two keys at every comparison, and that was most of the rows' setting in the
    # Routines page's first paint (bench_routines_page, "its reload"). The order holds until
    # the rows change or a person sorts again: a running routine's ticking time does not
    # move its row under the pointer.
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Show the rows by ``column`` (times by instant, the rest by folded text)."""
        self._order = (Column(column) if 0 <= column < len(Column) else Column.NAME, order)
        self.layoutAboutToBeChanged.emit()
        before, rows = self.persistentIndexList(), self._rows
        self._rows = self._sorted()
        self._texts.clear()
        position = {id(row): number for number, row in enumerate(self._rows)}
        after = [self.index(position[id(rows[index.row()])], index.column()) for index in before]
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def _sorted(self) -> list[RoutineRow]:
        column, order = self._order
        descending = order == Qt.SortOrder.DescendingOrder
        return sorted(self._read, key=lambda row: self._sort_key(row, column), reverse=descending)

    def tick(self, now: datetime) -> None:
        """A second passed: running routines' elapsed time (and "in 5 minutes") move on."""
        self._now = now
        self._texts.clear()
        if self._rows:
            first, last = (
                self.index(0, Column.STATE),
                self.index(len(self._rows) - 1, Column.NEXT_RUN),
            )
            self.dataChanged.emit(first, last, [Qt.ItemDataRole.DisplayRole])

    def row(self, index: int) -> RoutineRow:
        return self._rows[index]

    def row_of(self, name: str) -> int | None:
        return next((i for i, row in enumerate(self._rows) if row.name == name), None)

    # -- QAbstractTableModel ----------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(_COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        shown = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)  # a tip, if cut
        if role not in shown:
            return None
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(Column):
            return self._headers[Column(section)]
        if orientation == Qt.Orientation.Vertical and 0 <= section < len(self._rows):
            return str(section + 1)
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # A paint asks every cell in view for a dozen roles and the model answers five: the
        # others go at once (bench_routines_page, "painting it" and "filter keystroke").
        if role not in _ANSWERED or not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row, column = self._rows[index.row()], _COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(index.row(), row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, column)
        if role == NameRole:
            return row.name
        if column is Column.STATE and role in (ChipRole, IconRole):
            state = self.state_key(row)
            return state if role == ChipRole else STATE_ICONS[state]
        return None

    def state_key(self, row: RoutineRow) -> str:
        """What the State chip shows: ``broken``, ``running`` or the routine's state."""
        if row.view.broken is not None:
            return "broken"
        if self.running.get(row.name):
            return "running"
        if row.state is RoutineState.ACTIVE and on_trial(row):
            return "trial"
        return row.state.value

    def _sort_key(self, row: RoutineRow, column: Column) -> Any:
        """What a column sorts by: times as instants (never their words: "today" before
        "tomorrow"), the rest as folded text."""
        if column is Column.NEXT_RUN:
            due = row.view.routine.next_due
            active = due is not None and row.state is RoutineState.ACTIVE
            return due.timestamp() if active and due is not None else _NEVER
        if column is Column.LAST_RESULT:
            last = row.view.last_at
            return -last.timestamp() if last is not None else _NEVER  # the newest first
        return self._display(row, column).casefold()

    # -- cells ------------------------------------------------------------------------------
    def _text(self, number: int, row: RoutineRow, column: Column) -> str:
        text = self._texts.get((number, column))
        if text is None:
            text = self._texts[number, column] = self._display(row, column)
        return text

    def _display(self, row: RoutineRow, column: Column) -> str:
        if column is Column.NAME:
            return row.name
        if column is Column.SCHEDULE:
            return row.words(self.locale)
        if column is Column.ZONE:  # the key, as the routine stores it; its name in the tooltip
            revision = row.view.revision
            return "—" if revision is None else revision.spec.timezone
        if column is Column.STATE:
            return self._state(row)
        if column is Column.NEXT_RUN:
            return self._next_run(row)
        return self._last_result(row)

    def _tooltip(self, row: RoutineRow, column: Column) -> str | None:
        if column is Column.SCHEDULE:  # the whole sentence, and the spec as stored
            revision, words = row.view.revision, row.words(self.locale)
            return words if revision is None else f"{words}\n{revision.spec.schedule}"
        if column is Column.ZONE:
            return row.zone  # "Eastern Time (America/New_York)"
        if column is Column.STATE and row.state is RoutineState.ACTIVE and on_trial(row):
            meaning = _("A trial: every moment is decided as if live; the command never starts.")
            return f"{self._display(row, column)}\n{meaning}"
        if column in (Column.NAME, Column.STATE):
            return self._display(row, column)  # the column may be too narrow for it
        due = row.view.routine.next_due
        if column is Column.NEXT_RUN and due is not None and row.state is RoutineState.ACTIVE:
            return instant_text(due, row.zone_key, self.locale)
        last = row.view.last_at
        if column is Column.LAST_RESULT and last is not None:
            return instant_text(last, row.zone_key, self.locale)
        return None

    def _state(self, row: RoutineRow) -> str:
        if row.view.broken is not None:
            return _("Broken: edit or delete it")  # the Schedule column says why
        going = self.running.get(row.name)
        if going:
            return self._running(going)
        state = self._states[row.state]
        if row.state is RoutineState.ACTIVE and on_trial(row):
            state = _("Trial")  # a chip's word; what a trial is, in its tooltip
        reason = row.view.routine.state_reason
        if not reason:
            return state
        return _("{state} ({reason})").format(
            state=state, reason=queries.window_reason_text(reason)
        )

    def _running(self, going: list[RunningRun]) -> str:
        """ "Running for 2 min 5 sec" (the longest-running one, when several are)."""
        starts = [run.started_at for run in going if run.started_at is not None]
        if not starts or self._now is None:
            return _("Starting")
        took = run_times.length((self._now - min(starts)).total_seconds(), self.locale)
        if len(going) > 1:
            return _("{count} runs, the first for {elapsed}").format(count=len(going), elapsed=took)
        return _("Running for {elapsed}").format(elapsed=took)

    def _next_run(self, row: RoutineRow) -> str:
        due = row.view.routine.next_due
        if row.state is not RoutineState.ACTIVE or row.view.broken is not None:
            return "—"  # the State column says why
        if due is None and row.after is not None:
            return row.after  # it has no time of its own
        if due is None or self._now is None:
            return _("No further runs")
        return texts.when(due, self._now, self.locale)

    def _last_result(self, row: RoutineRow) -> str:
        disposition, at = row.view.last_disposition, row.view.last_at
        if disposition is None:
            return _("Not run yet")
        label = self._last_label(disposition, row.view.last_decided_as)
        if at is None or self._now is None:
            return label
        return _("{disposition}, {when}").format(
            disposition=label, when=ago(at, self._now, self.locale)
        )

    def _last_label(self, disposition: str, decided_as: str | None) -> str:
        """The last run's outcome in a word or two; a decided one says which way it went."""
        if disposition == "reconciled" and decided_as in self._decided:
            return self._decided[decided_as]
        return self._dispositions.get(disposition, disposition)
