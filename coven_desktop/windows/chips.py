"""How a run ended, as a coloured chip: the disposition's colour (the timeline's, so the two
windows agree) under its word, with the text black or white, whichever reads better on it —
legible under a light and a dark palette alike.

:class:`ChipDelegate` draws a table cell whose model gives :data:`ChipRole` (the outcome key)
as a chip; :func:`chip_style` styles a label the same way (the run detail's header).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from coven_desktop.windows.timeline_colours import STATE_COLOURS as COLOURS
from coven_desktop.windows.timeline_geometry import IN_PROGRESS, PLANNED
from coven_desktop.windows.tones import contrast

#: A cell's outcome key (a disposition, or ``waiting``/``starting``/``running``).
ChipRole = Qt.ItemDataRole.UserRole + 20

_LIVE = {"running": IN_PROGRESS, "starting": IN_PROGRESS, "waiting": PLANNED}
_PAD_X, _PAD_Y, _RADIUS = 7.0, 3.0, 8.0


def chip_colour(outcome: str) -> QColor:
    """The colour of an outcome: its disposition's on the timeline."""
    return QColor(COLOURS.get(_LIVE.get(outcome, outcome), COLOURS[PLANNED]))


def text_on(fill: QColor) -> QColor:
    """Black or white: whichever contrasts more with ``fill``."""
    black, white = QColor("black"), QColor("white")
    return black if contrast(black, fill) >= contrast(white, fill) else white


def chip_style(outcome: str) -> str:
    """A style sheet that makes a QLabel a chip of ``outcome``."""
    fill = chip_colour(outcome)
    return (
        f"background-color: {fill.name()}; color: {text_on(fill).name()}; "
        f"border-radius: {_RADIUS:.0f}px; padding: {_PAD_Y:.0f}px {_PAD_X:.0f}px;"
    )


class ChipDelegate(QStyledItemDelegate):
    """Paints a cell with :data:`ChipRole` as a chip; any other cell as usual."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        outcome = index.data(ChipRole)
        if not outcome:
            super().paint(painter, option, index)
            return
        style = option.widget.style() if option.widget else QApplication.style()
        # the row's background (selection, alternating colours) first, without its text
        plain = QStyleOptionViewItem(option)
        self.initStyleOption(plain, index)
        plain.text = ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, plain, painter, option.widget)
        self._paint_chip(painter, option, str(index.data(Qt.ItemDataRole.DisplayRole) or ""),
                         chip_colour(str(outcome)))  # fmt: skip

    @staticmethod
    def _paint_chip(
        painter: QPainter, option: QStyleOptionViewItem, text: str, fill: QColor
    ) -> None:
        rect = QRectF(option.rect).adjusted(3, 3, -3, -3)
        metrics = option.fontMetrics
        width = min(rect.width(), metrics.horizontalAdvance(text) + 2 * _PAD_X + 2)
        chip = QRectF(rect.left(), rect.top(), width, rect.height())
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(fill)
        painter.drawRoundedRect(chip, _RADIUS, _RADIUS)
        painter.setPen(text_on(fill))
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(width - 2 * _PAD_X + 1))
        painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, shown)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        hint = super().sizeHint(option, index)
        if index.data(ChipRole):
            text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
            hint.setWidth(option.fontMetrics.horizontalAdvance(text) + int(2 * _PAD_X) + 10)
        return hint
