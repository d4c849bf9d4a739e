"""What the attention windows share: a read-only table model, a page that reloads on the
engine's news, an operator call whose refusal the page shows inline, and Babel formatting.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from babel.dates import (
    format_date,
    format_datetime,
    format_time,
    format_timedelta,
    get_datetime_format,
)
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTableView,
    QWidget,
)

from coven_core.engine import Engine
from coven_core.errors import CovenError
from coven_core.queries import instant_from
from coven_desktop.tasks import Tasks
from coven_desktop.windows.tones import Tone, Tones

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

T = TypeVar("T")
log = logging.getLogger(__name__)
Index = QModelIndex | QPersistentModelIndex
Unit = Literal["day", "hour", "minute", "second"]


# -- formatting in the user's locale --------------------------------------------------------
def moment(at: datetime | None, locale: str, *, seconds: bool = True) -> str:
    """A local date and time, as the locale writes it ("Mar 30, 2026, 2:02:07 PM",
    "30.03.2026, 14:02:07"); without seconds for a planned moment."""
    if at is None:
        return "—"
    return wall_text(at.astimezone(), locale, seconds=seconds)


def wall_text(wall: datetime, locale: str, *, seconds: bool = True) -> str:
    """A date and time written as the locale writes them, as they are (no zone is changed):
    a routine's wall time in its own zone, say."""
    if seconds:
        return format_datetime(wall, "medium", locale=locale)
    pattern = str(get_datetime_format("medium", locale=locale))  # "{1}, {0}": date, then time
    return pattern.replace("{1}", format_date(wall, "medium", locale=locale)).replace(
        "{0}", format_time(wall, "short", locale=locale)
    )


def moment_text(text: str | None, locale: str, *, seconds: bool = True) -> str:
    """A stored instant (the store's format or ISO 8601) as :func:`moment`; unreadable text
    is shown as it is rather than hidden."""
    if not text:
        return "—"
    parsed = parse_instant(text)
    return text if parsed is None else moment(parsed, locale, seconds=seconds)


def parse_instant(text: str) -> datetime | None:
    try:
        return instant_from(text)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def span(seconds: float, locale: str, parts: int = 2) -> str:
    """An exact length in its two largest units: "2 days 8 hours", "1 minute 35 seconds"."""
    remaining, words = round(abs(seconds)), list[str]()
    units: tuple[tuple[Unit, int], ...] = (("day", 86400), ("hour", 3600), ("minute", 60),
                                            ("second", 1))  # fmt: skip
    for unit, size in units:
        count, remaining = divmod(remaining, size)
        if count and len(words) < parts:
            words.append(format_timedelta(timedelta(seconds=count * size), threshold=100,
                                          granularity=unit, locale=locale))  # fmt: skip
        elif words:
            break  # "2 days 30 seconds" would hide the hours between: stop at a zero unit
    return " ".join(words) or format_timedelta(timedelta(0), granularity="second", locale=locale)


def relative(at: datetime, now: datetime, locale: str) -> str:
    """ "3 hours ago" / "vor 3 Stunden"."""
    return format_timedelta(at - now, add_direction=True, locale=locale)


# -- one read-only table model --------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    cells: Sequence[str]
    tooltip: str | None = None
    colour: str | None = None  # a foreground colour for the whole row
    bold: bool = False


class RowsModel(QAbstractTableModel):
    """Rows of text under translated headers; every window's tables are one of these."""

    def __init__(self, headers: Sequence[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._headers = list(headers)
        self._rows: list[Row] = []

    def set_rows(self, rows: Sequence[Row]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row(self, number: int) -> Row:
        return self._rows[number]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._headers)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            cells = row.cells
            return cells[index.column()] if index.column() < len(cells) else ""
        if role == Qt.ItemDataRole.ToolTipRole:  # the row's note, else the cell whole, if cut
            return row.tooltip or self.data(index) or None
        if role == Qt.ItemDataRole.ForegroundRole and row.colour:
            return QBrush(QColor(row.colour))
        if role == Qt.ItemDataRole.FontRole and row.bold:
            font = QFont()
            font.setBold(True)
            return font
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        shown = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)  # whole, if cut
        if role not in shown or orientation != Qt.Orientation.Horizontal:
            return None
        return self._headers[section] if 0 <= section < len(self._headers) else None


def table(
    model: RowsModel, parent: QWidget, *, stretch: int | None = None, wrap: bool = False,
    view: QTableView | None = None,
) -> QTableView:  # fmt: skip
    """A read-only, row-selecting view of ``model``; column ``stretch`` takes the free width
    (and, with ``wrap``, wraps its text over taller rows). ``view``: a table made already
    (a ``FittingTable``, which sizes its own columns), set up the same way."""
    fitted = view is not None
    view = QTableView(parent) if view is None else view
    view.setModel(model)
    view.setTabKeyNavigation(False)  # Tab moves on to the page's next control (issue #22)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setWordWrap(wrap)
    rows = view.verticalHeader()
    rows.setVisible(False)
    rows.setDefaultSectionSize(view.fontMetrics().height() + 8)
    if wrap:
        rows.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    view.setAlternatingRowColors(True)
    if fitted:
        return view
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    if stretch is not None:
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    else:
        header.setStretchLastSection(True)
    return view


W = TypeVar("W", bound=QWidget)


def named(widget: W, name: str) -> W:
    """``widget``, with the name a screen reader says for it (issue #22)."""
    widget.setAccessibleName(name)
    return widget


def error_label(parent: QWidget, tones: Tones) -> QLabel:
    """An inline error line, hidden until there is something to say, in the error tone of
    the palette (it reads on a light window and on a dark one)."""
    label = QLabel(parent)
    tones.text(label, Tone.ERROR)
    label.setWordWrap(True)
    label.hide()
    return label


def show_error(label: QLabel, message: str | None) -> None:
    label.setText(message or "")
    label.setVisible(bool(message))


def ask(
    parent: QWidget, title: str, question: str, detail: str, verb: str, then: Callable[[], object]
) -> QMessageBox:
    """A question that does not block (returned open): ``then()`` runs only on ``verb``.
    Cancel is the default and the escape, so an irreversible step is never one Enter away;
    plain text, since a reason in it is a person's own."""
    box = QMessageBox(parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setText(question)
    box.setInformativeText(detail)
    yes = box.addButton(verb, QMessageBox.ButtonRole.AcceptRole)
    no = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(no)
    box.setEscapeButton(no)
    box.finished.connect(lambda _result: box.clickedButton() is yes and then())
    box.open()
    return box


# -- acting and reloading -------------------------------------------------------------------
@dataclass(frozen=True)
class Done(Generic[T]):
    """An operator call's outcome: its result, or the refusal to show next to the control."""

    result: T | None = None
    refusal: str | None = None

    @property
    def ok(self) -> bool:
        return self.refusal is None


async def act(desktop: Desktop, work: Callable[[Engine], T]) -> Done[T]:
    """Like :meth:`Desktop.act`, but the page shows a refusal itself, where the person is
    looking, instead of it going to the app-wide ``failed`` signal."""
    try:
        result = await desktop.service.call(work)
    except CovenError as error:
        return Done(refusal=str(error))
    await desktop.service.refresh()
    await desktop.refresh()  # every view (the tray too) learns what changed
    return Done(result)


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a page's load or action failed", exc_info=task.exception())


class LivePage(QWidget):
    """A page that reloads when the engine has news (``desktop.overviewChanged``) while it is
    shown — never on a timer. ``settle()`` waits for the loads and actions it started."""

    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desktop = desktop
        self._tasks = Tasks()
        desktop.overviewChanged.connect(self._on_news)

    async def reload(self) -> None:
        raise NotImplementedError

    def _on_news(self, _overview: object) -> None:
        if self.isVisible():
            self.spawn(self.reload())

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        task = self._tasks.spawn(work)
        task.add_done_callback(_log_failure)
        return task

    async def settle(self) -> None:
        """Wait for the page's loads and actions; the first that failed raises here."""
        failures = await self._tasks.settle()
        if failures:
            raise failures[0]
        await self.desktop.settle()

    @property
    def locale_name(self) -> str:
        return self.desktop.locale
