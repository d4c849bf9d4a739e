"""How a run ended, as a coloured chip: the disposition's colour (the timeline's, so the two
windows agree) under its word, with the text black or white, whichever reads better on it —
legible under a light and a dark palette alike.

:class:`ChipDelegate` draws a table cell whose model gives :data:`ChipRole` (the outcome key)
as a chip; :func:`chip_style` styles a label the same way (the run detail's header).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPointF,
    QRectF,
    QSize,
    Qt,
)
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from coven_desktop.windows.timeline_colours import STATE_COLOURS as COLOURS
from coven_desktop.windows.timeline_geometry import IN_PROGRESS, PLANNED
from coven_desktop.windows.tones import contrast

#: A cell's outcome key (a disposition, ``waiting``/``starting``/``running``, or a routine's
#: state: ``active``, ``paused``, ``quarantined``, ``broken``).
ChipRole = Qt.ItemDataRole.UserRole + 20
#: A chip's icon, as (theme name, the style's fallback pixmap): drawn inside the chip, so the
#: state reads by shape as well as by colour.
CHIP_ICON_ROLE = Qt.ItemDataRole.UserRole + 21

#: Keys that are not dispositions, by the disposition whose colour they share: a routine that
#: runs as a run does; a quarantined one as a failure; a broken one as a decision a person owes.
_LIVE = {
    "running": IN_PROGRESS, "starting": IN_PROGRESS, "waiting": PLANNED,
    "active": "succeeded", "paused": "skipped", "quarantined": "failed",
    "broken": "recovery_required", "deleted": "cancelled", "trial": "shadowed",
}  # fmt: skip
_ICON = 14  # pixels: the chip's icon, inside its padding
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


class _Look(NamedTuple):
    """How a chip of one outcome looks: its fill, its ink, its icon inked (if any)."""

    fill: QColor
    ink: QColor
    icon: QPixmap | None


class ChipDelegate(QStyledItemDelegate):
    """Paints a cell with :data:`ChipRole` as a chip; any other cell as usual."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # One icon per state for the delegate's life: a new QIcon for every chip painted put
        # new pixmaps in Qt's pixmap cache at every paint, which grew the app by 10 MiB over
        # a simulated week of runs with the window open (bench_week_rss).
        self._icons: dict[object, QIcon | None] = {}
        # A chip's colours and inked icon per outcome and icon, made once: working them out
        # for every chip at every paint was much of a filter keystroke on the Routines page
        # (bench_routines_page, "filter keystroke"). The colours are fixed, not the palette's.
        self._looks: dict[tuple[str, object], _Look] = {}

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
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        self._paint_chip(painter, option, text, self._look(str(outcome), index, style))

    def _look(
        self, outcome: str, index: QModelIndex | QPersistentModelIndex, style: QStyle
    ) -> _Look:
        named = index.data(CHIP_ICON_ROLE)
        key = (outcome, named)
        if key not in self._looks:
            fill = chip_colour(outcome)
            ink = text_on(fill)
            icon = self._icon(named, style)
            self._looks[key] = _Look(fill, ink, None if icon is None else inked(icon, ink))
        return self._looks[key]

    def _icon(self, named: object, style: QStyle) -> QIcon | None:
        if named not in self._icons:
            self._icons[named] = _icon(named, style)
        return self._icons[named]

    @staticmethod
    def _paint_chip(
        painter: QPainter, option: QStyleOptionViewItem, text: str, look: _Look
    ) -> None:
        rect = QRectF(option.rect).adjusted(3, 3, -3, -3)
        metrics = option.fontMetrics
        fill, ink, icon = look
        room = _ICON + 4 if icon is not None else 0
        width = min(rect.width(), metrics.horizontalAdvance(text) + 2 * _PAD_X + 2 + room)
        chip = QRectF(rect.left(), rect.top(), width, rect.height())
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(fill)
        painter.drawRoundedRect(chip, _RADIUS, _RADIUS)
        if icon is not None:
            top = chip.top() + (chip.height() - _ICON) / 2
            painter.drawPixmap(QPointF(chip.left() + _PAD_X, top), icon)
        painter.setPen(ink)
        words = chip.adjusted(room, 0, 0, 0)
        shown = metrics.elidedText(
            text, Qt.TextElideMode.ElideRight, int(width - room - 2 * _PAD_X + 1)
        )
        painter.drawText(words, Qt.AlignmentFlag.AlignCenter, shown)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        hint = super().sizeHint(option, index)
        if index.data(ChipRole):
            text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
            room = _ICON + 4 if index.data(CHIP_ICON_ROLE) else 0
            hint.setWidth(option.fontMetrics.horizontalAdvance(text) + int(2 * _PAD_X) + 10 + room)
        return hint


def inked(icon: QIcon, ink: QColor, size: int = _ICON) -> QPixmap:
    """The icon's shape in one colour: in a chip, its text colour, legible on any chip colour
    (a red quarantine icon vanished on the red chip), the same ink as the words beside it."""
    pixmap = icon.pixmap(size, size)
    with_ink = QPainter(pixmap)
    with_ink.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
    with_ink.fillRect(pixmap.rect(), ink)
    with_ink.end()
    return pixmap


def _icon(named: object, style: QStyle) -> QIcon | None:
    """A chip icon named as (theme name, the style's fallback), or (a drawn glyph, None).

    Only the theme's *symbolic* variant is taken: it is drawn in one colour to be recoloured,
    so it inks into its shape. The plain one is a picture in colour (Adwaita's
    ``emblem-default`` is a green disc under its check), which inked into a blot; without
    a symbolic variant the style's glyph serves."""
    if not isinstance(named, tuple):
        return None
    theme, fallback = named
    if fallback is None:
        return DRAWN[str(theme)]()
    symbolic = f"{theme}-symbolic"
    if QIcon.hasThemeIcon(symbolic):
        return QIcon.fromTheme(symbolic)
    return style.standardIcon(fallback)


#: Glyphs drawn here, where themes and styles offer pictures in colour ("preview" is a
#: document, "delete" a filled bin), which inked into a chip (:func:`inked`) were blots.
EYE, BIN = "coven-eye", "coven-bin"
_GLYPH = 4 * _ICON  # drawn large, scaled down by the icon: smooth at any device ratio


def _glyph(draw: Callable[[QPainter, float], None]) -> QIcon:
    """A glyph in black outline on transparency, ``draw(painter, size)`` drawing it."""
    pixmap = QPixmap(_GLYPH, _GLYPH)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(QColor("black"), _GLYPH * 0.1))
    painter.setBrush(QColor("black"))
    draw(painter, float(_GLYPH))
    painter.end()
    return QIcon(pixmap)


def _eye(painter: QPainter, size: float) -> None:
    """An open eye, a trial's meaning: watched, not acted on."""
    middle, reach, lift = size / 2, size * 0.46, size * 0.72
    lids = QPainterPath(QPointF(middle - reach, middle))
    lids.quadTo(QPointF(middle, middle - lift), QPointF(middle + reach, middle))
    lids.quadTo(QPointF(middle, middle + lift), QPointF(middle - reach, middle))
    painter.strokePath(lids, painter.pen())
    painter.drawEllipse(QPointF(middle, middle), size * 0.16, size * 0.16)


def _bin(painter: QPainter, size: float) -> None:
    """A bin in outline: its lid, its body, two ribs."""
    painter.drawLine(QPointF(size * 0.12, size * 0.2), QPointF(size * 0.88, size * 0.2))
    painter.drawLine(QPointF(size * 0.4, size * 0.08), QPointF(size * 0.6, size * 0.08))
    body = QPainterPath(QPointF(size * 0.22, size * 0.3))
    body.lineTo(QPointF(size * 0.3, size * 0.92))
    body.lineTo(QPointF(size * 0.7, size * 0.92))
    body.lineTo(QPointF(size * 0.78, size * 0.3))
    painter.strokePath(body, painter.pen())
    for x in (0.43, 0.57):
        painter.drawLine(QPointF(size * x, size * 0.42), QPointF(size * x, size * 0.8))


DRAWN: dict[str, Callable[[], QIcon]] = {EYE: lambda: _glyph(_eye), BIN: lambda: _glyph(_bin)}
