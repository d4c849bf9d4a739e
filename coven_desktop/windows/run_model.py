"""The Runs window's table: one row per occurrence, newest first — its outcome as a chip,
routine, planned and actual start, duration (a live run's elapsed time, ticking), exit code or
signal, attempts, and why it did or did not run, in the engine's words."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from coven_core import queries
from coven_core.queries import RunRow, _
from coven_desktop.windows import run_times
from coven_desktop.windows.chips import ChipRole

Index = QModelIndex | QPersistentModelIndex

#: The outcomes of a run still going; they tick.
LIVE = frozenset({"waiting", "starting", "running"})
#: The outcomes a person can cancel (the engine refuses the rest).
CANCELLABLE = LIVE
#: The outcomes a person may ask another attempt of (``coven retry``). The engine refuses
#: what no new attempt could mend (an invalid routine, a refusal by the system) and says why.
RETRYABLE = frozenset({"failed", "timed_out", "cancelled"})


class Column(enum.IntEnum):
    OUTCOME = 0
    ROUTINE = 1
    PLANNED = 2
    STARTED = 3
    DURATION = 4
    EXIT = 5
    ATTEMPTS = 6
    WHY = 7


class OutcomeWords(QObject):
    """An outcome key as one translated word (the chips' text)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.words = {
            "succeeded": _("Succeeded"), "failed": _("Failed"),
            "cancelled": _("Cancelled"), "timed_out": _("Timed out"),
            "skipped": _("Skipped"), "recovery_required": _("Needs decision"),
            "reconciled": _("Decided"), "shadowed": _("Trial"),
            "waiting": _("Waiting"), "starting": _("Starting"),
            "running": _("Running"),
        }  # fmt: skip

    def __call__(self, outcome: str) -> str:
        return self.words.get(outcome, outcome.replace("_", " ").capitalize())

    def exit_text(self, code: int | None, signal: int | None) -> str:
        if signal is not None:
            return _("signal {number}").format(number=signal)
        return "—" if code is None else str(code)


class RunsModel(QAbstractTableModel):
    def __init__(self, locale: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.locale = locale
        self.rows: list[RunRow] = []
        self._now: datetime | None = None
        self._words = OutcomeWords(self)
        self._unseen_font = QFont()  # a failure nobody has opened: what the tray counts
        self._unseen_font.setBold(True)
        self._headers = {
            Column.OUTCOME: _("Outcome"), Column.ROUTINE: _("Routine"),
            Column.PLANNED: _("Planned"), Column.STARTED: _("Started"),
            Column.DURATION: _("Duration"), Column.EXIT: _("Exit"),
            Column.ATTEMPTS: _("Attempts"), Column.WHY: _("What happened"),
        }  # fmt: skip

    # -- content ----------------------------------------------------------------------------
    def set_rows(self, rows: list[RunRow], now: datetime) -> None:
        self.beginResetModel()
        self.rows, self._now = list(rows), now
        self.endResetModel()

    def append_rows(self, rows: list[RunRow]) -> None:
        if rows:
            first = len(self.rows)
            self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
            self.rows += rows
            self.endInsertRows()

    def row(self, index: int) -> RunRow:
        return self.rows[index]

    def live_rows(self) -> list[int]:
        return [n for n, row in enumerate(self.rows) if row.outcome in LIVE]

    def tick(self, now: datetime) -> None:
        """A second passed: the live rows' elapsed time moves on."""
        self._now = now
        for number in self.live_rows():
            cell = self.index(number, Column.DURATION)
            self.dataChanged.emit(cell, cell, [Qt.ItemDataRole.DisplayRole])

    # -- QAbstractTableModel ----------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(Column)
        ):
            return self._headers[Column(section)]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], Column(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, column)
        if role == ChipRole and column is Column.OUTCOME:
            return row.outcome
        if role == Qt.ItemDataRole.TextAlignmentRole and column is Column.ATTEMPTS:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.FontRole and column is Column.WHY and row.unseen_failure:
            return self._unseen_font  # only here: bolder times would widen the fitted columns
        return None

    # -- cells ------------------------------------------------------------------------------
    def text(self, row: RunRow, column: Column) -> str:
        locale = self.locale
        cells = {
            Column.OUTCOME: lambda: self._words(row.outcome),
            Column.ROUTINE: lambda: row.routine,
            Column.PLANNED: lambda: self._planned(row),
            Column.STARTED: lambda: run_times.clock(row.started_at, locale, row.planned_utc),
            Column.DURATION: lambda: run_times.length(row.seconds_at(self._now), locale),
            Column.EXIT: lambda: self._exit(row),
            Column.ATTEMPTS: lambda: str(row.attempts) if row.attempts else "—",
            Column.WHY: lambda: self._why(row),
        }
        return cells[column]()

    def _why(self, row: RunRow) -> str:
        """A failure's own words: its chip and exit already say it failed (the whole sentence
        is the tooltip), and the column is the one that gives way. A run that started hours
        after its moment says why (its chip says how it ended). Else the engine's sentence."""
        if row.last_error:
            return row.last_error
        if row.caught_up is not None:
            return queries.caught_up(row.caught_up, self.locale)
        return row.reason

    def _planned(self, row: RunRow) -> str:
        """When its moment was. A run someone asked for (Run now) had no moment of the
        schedule, and says so; when they asked is its tooltip, and it started next door."""
        if row.by_hand:
            return _("By hand")
        return run_times.planned(row.planned_utc, row.planned_local, row.dst, row.zone,
                                 self.locale, self._now)  # fmt: skip

    def _exit(self, row: RunRow) -> str:
        if row.outcome in LIVE:
            return ""  # the page puts a Cancel button here
        return self._words.exit_text(row.exit_code, row.exit_signal)

    def _tooltip(self, row: RunRow, column: Column) -> str | None:
        if column is Column.PLANNED and row.by_hand:
            return _("Asked for by hand at {when}").format(
                when=run_times.full(row.planned_utc, self.locale)
            )
        if column is Column.PLANNED:
            return _("{local} — in {zone}: {wall}").format(
                local=run_times.full(row.planned_utc, self.locale), zone=row.routine,
                wall=run_times.wall_in(row.planned_local, row.planned_utc, row.zone, self.locale),
            )  # fmt: skip
        if column is Column.STARTED and row.started_at is not None:
            late = (row.started_at - row.planned_utc).total_seconds()
            return _("{when}, {late} after the planned moment").format(
                when=run_times.full(row.started_at, self.locale),
                late=run_times.length(late, self.locale),
            )
        if column in (Column.WHY, Column.ROUTINE, Column.OUTCOME):
            if row.caught_up is None:
                return row.reason
            return f"{row.reason}\n{queries.caught_up(row.caught_up, self.locale)}"
        return None
