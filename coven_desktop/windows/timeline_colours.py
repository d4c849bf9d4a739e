"""The timeline's colours, taken from the palette (DESIGN §12): legible under a light palette
and a dark one alike, never a fixed colour that vanishes on a dark background.

Each state keeps its hue (the states' own colours, :data:`STATE_COLOURS`, which the chips use
too) and takes the lightness that sets its marks 3:1 apart from the lanes — WCAG's contrast
for graphics. Bands (asleep, not running), the grid and windows of missed moments are tints of
the lanes' own colour toward a hue or toward the text: just strong enough to see, so that the
marks stay what the eye finds first.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette

from coven_core.queries import BAND_ASLEEP
from coven_desktop.windows.timeline_geometry import IN_PROGRESS, PLANNED, PLANNED_SKIPPED
from coven_desktop.windows.tones import contrast

#: WCAG 2.1's minimum contrast for graphical objects (1.4.11).
GRAPHIC_CONTRAST = 3.0
#: The least a band or the grid must differ from the lanes to be seen at all.
VISIBLE_CONTRAST = 1.15
BAND_NOT_RUNNING = "app_not_running"

#: The states' own colours (as drawn on a light background).
STATE_COLOURS: dict[str, QColor] = {
    "succeeded": QColor("#2e7d32"),
    "failed": QColor("#c62828"),
    "cancelled": QColor("#795548"),
    "timed_out": QColor("#ef6c00"),
    "skipped": QColor("#9e9e9e"),
    "recovery_required": QColor("#ad1457"),
    "reconciled": QColor("#1565c0"),
    "shadowed": QColor("#9575cd"),  # a trial's moment: decided, never started
    IN_PROGRESS: QColor("#00838f"),
    PLANNED: QColor("#90a4ae"),
    PLANNED_SKIPPED: QColor("#bdbdbd"),
}
_BAND_HUES = {BAND_ASLEEP: QColor("#1e63c8"), BAND_NOT_RUNNING: QColor("#e08a00")}
_TRANSITION, _NOW = QColor("#6a1b9a"), QColor("#d50000")


@dataclass(frozen=True)
class TimelineColours:
    marks: dict[str, QColor]  # by category (timeline_geometry.CATEGORIES)
    window: QColor  # a window of missed or paused moments
    bands: dict[str, QColor]  # by kind: asleep, app_not_running
    transition: QColor  # a daylight-saving change
    now: QColor
    grid: QColor
    trial: QColor  # a trial lane's hatching: its moments are decided, never started


def timeline_colours(palette: QPalette) -> TimelineColours:
    lanes = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    return TimelineColours(
        marks={key: standing_out(colour, lanes) for key, colour in STATE_COLOURS.items()},
        window=visible_tint(lanes, text, start=0.3),
        bands={kind: visible_tint(lanes, hue) for kind, hue in _BAND_HUES.items()},
        transition=standing_out(_TRANSITION, lanes),
        now=standing_out(_NOW, lanes),
        grid=visible_tint(lanes, text, start=0.12),
        trial=visible_tint(lanes, STATE_COLOURS["shadowed"], start=0.5),
    )


def standing_out(colour: QColor, behind: QColor, ratio: float = GRAPHIC_CONTRAST) -> QColor:
    """``colour``'s hue and saturation at the lightness nearest its own that contrasts
    ``ratio``:1 with ``behind`` (darker on a light background, lighter on a dark one)."""
    hue, saturation = colour.hslHueF(), colour.hslSaturationF()
    lightness = colour.lightnessF()
    step = 0.02 if behind.lightnessF() < 0.5 else -0.02
    found = QColor(colour)
    while contrast(found, behind) < ratio and 0.0 < lightness < 1.0:
        lightness = min(max(lightness + step, 0.0), 1.0)
        found = QColor.fromHslF(max(hue, 0.0), saturation, lightness)
    return found


def visible_tint(behind: QColor, toward: QColor, start: float = 0.12) -> QColor:
    """``behind`` mixed with ``toward``, from ``start`` on, until the mix can be seen on it."""
    share = start
    found = _mix(behind, toward, share)
    while contrast(found, behind) < VISIBLE_CONTRAST and share < 1.0:
        share = min(share + 0.04, 1.0)
        found = _mix(behind, toward, share)
    return found


def _mix(under: QColor, over: QColor, share: float) -> QColor:
    def channel(a: float, b: float) -> float:
        return a + (b - a) * share

    return QColor.fromRgbF(channel(under.redF(), over.redF()),
                           channel(under.greenF(), over.greenF()),
                           channel(under.blueF(), over.blueF()))  # fmt: skip
