"""Colours that say a state — warning (amber), error (red) — taken from the palette, so they
read on a light window and on a dark one alike (DESIGN §12: light and dark palettes).

A tone keeps its hue and moves its lightness away from the window until its text contrasts
4.5:1 (WCAG's contrast for text) with every background it is drawn on: the window, the
tables' base and alternate rows, and a tinted banner. A widget painted with a tone through
:class:`Tones` is painted again when the palette changes.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QLabel, QWidget

#: WCAG 2's minimum contrast for normal text.
TEXT_CONTRAST = 4.5
#: How much of a tone's full colour a banner's background takes from it.
TINT = 0.14


class Tone(enum.Enum):
    WARNING = 38  # the hue, in degrees: amber
    ERROR = 356  # red


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2's contrast ratio of two colours (1 to 21)."""
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _luminance(colour: QColor) -> float:
    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * linear(colour.redF())
        + 0.7152 * linear(colour.greenF())
        + 0.0722 * linear(colour.blueF())
    )


def backgrounds(palette: QPalette) -> list[QColor]:
    """What text is drawn on in a page: the window, a table's rows, a banner's tint."""
    roles = (QPalette.ColorRole.Window, QPalette.ColorRole.Base, QPalette.ColorRole.AlternateBase)
    found = [palette.color(role) for role in roles]
    return found + [tint(palette, tone) for tone in Tone]


def tint(palette: QPalette, tone: Tone) -> QColor:
    """A banner's background: the window with a little of the tone's full colour."""
    window, full = _rgb(palette.color(QPalette.ColorRole.Window)), _rgb(_full(tone))
    return QColor.fromRgbF(*(w + (f - w) * TINT for w, f in zip(window, full, strict=True)))


def colour(palette: QPalette, tone: Tone) -> QColor:
    """The tone, as light (on a dark window) or as dark (on a light one) as it must be for
    text to read on every background of the page."""
    under = backgrounds(palette)
    dark_window = palette.color(QPalette.ColorRole.Window).lightnessF() < 0.5
    step = 0.02 if dark_window else -0.02
    lightness = 0.55
    found = QColor.fromHslF(tone.value / 360, 1.0, lightness)
    while 0.0 < lightness < 1.0 and min(contrast(found, b) for b in under) < TEXT_CONTRAST:
        lightness += step
        found = QColor.fromHslF(tone.value / 360, 1.0, min(max(lightness, 0.0), 1.0))
    return found


def _full(tone: Tone) -> QColor:
    return QColor.fromHslF(tone.value / 360, 1.0, 0.5)


def _rgb(colour: QColor) -> Sequence[float]:
    return colour.redF(), colour.greenF(), colour.blueF()


class Tones(QObject):
    """Paints widgets with tones from their owner's palette, and again when it changes."""

    def __init__(self, owner: QWidget) -> None:
        super().__init__(owner)
        self._owner = owner
        self._painters: list[Callable[[QPalette], None]] = []
        owner.installEventFilter(self)

    def text(self, label: QLabel, tone: Tone, *, bold: bool = False) -> None:
        """The label's text in the tone."""
        weight = " font-weight: bold;" if bold else ""
        self._add(
            lambda palette: label.setStyleSheet(f"color: {colour(palette, tone).name()};{weight}")
        )

    def banner(self, frame: QFrame, tone: Tone) -> None:
        """A tinted panel with a border in the tone (named, so its children keep their look)."""
        name = frame.objectName() or f"tone{id(frame)}"
        frame.setObjectName(name)
        self._add(
            lambda palette: frame.setStyleSheet(
                f"QFrame#{name} {{ background: {tint(palette, tone).name()}; "
                f"border: 1px solid {colour(palette, tone).name()}; "
                f"border-left: 4px solid {colour(palette, tone).name()}; border-radius: 3px; }}"
            )
        )

    def also(self, paint: Callable[[QPalette], None]) -> None:
        """Anything else drawn in tones (a table's rows): redone when the palette changes."""
        self._add(paint)

    def colour(self, tone: Tone) -> QColor:
        return colour(self._owner.palette(), tone)

    def _add(self, paint: Callable[[QPalette], None]) -> None:
        self._painters.append(paint)
        paint(self._owner.palette())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._owner and event.type() == QEvent.Type.PaletteChange:
            for paint in self._painters:
                paint(self._owner.palette())
        return False
