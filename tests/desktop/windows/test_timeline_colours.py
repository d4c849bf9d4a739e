"""The timeline's colours come from the palette (issue #22): under a light palette and a dark
one every mark stands 3:1 from the lanes (WCAG 1.4.11, like the tray icons' test), the bands
and the grid can be seen, and a palette change repaints the marks in the new colours."""

from __future__ import annotations

from collections import Counter
from datetime import UTC

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from coven_desktop.demo.attention import dark_palette
from coven_desktop.windows.timeline_canvas import TimelineCanvas
from coven_desktop.windows.timeline_colours import (
    GRAPHIC_CONTRAST,
    STATE_COLOURS,
    VISIBLE_CONTRAST,
    timeline_colours,
)
from coven_desktop.windows.timeline_legend import Legend, legend_frame
from coven_desktop.windows.tones import contrast


def light_palette() -> QPalette:
    palette, role = QPalette(), QPalette.ColorRole
    for which, name in ((role.Window, "#efefef"), (role.Base, "#ffffff"), (role.Text, "#000000")):
        palette.setColor(which, QColor(name))
    return palette


PALETTES = {"light": light_palette, "dark": dark_palette}


@pytest.mark.parametrize("name", PALETTES)
def test_every_mark_stands_out_from_the_lanes(name: str, qapp: QApplication) -> None:
    palette = PALETTES[name]()
    lanes = palette.color(QPalette.ColorRole.Base)
    colours = timeline_colours(palette)
    drawn = {**colours.marks, "transition": colours.transition, "now": colours.now}
    weak = {key: round(contrast(c, lanes), 2) for key, c in drawn.items()
            if contrast(c, lanes) < GRAPHIC_CONTRAST}  # fmt: skip
    assert weak == {}
    assert set(colours.marks) == set(STATE_COLOURS)


@pytest.mark.parametrize("name", PALETTES)
def test_bands_and_the_grid_can_be_seen_and_stay_quiet(name: str, qapp: QApplication) -> None:
    palette = PALETTES[name]()
    lanes = palette.color(QPalette.ColorRole.Base)
    colours = timeline_colours(palette)
    for quiet in (*colours.bands.values(), colours.grid, colours.window, colours.trial):
        assert VISIBLE_CONTRAST <= contrast(quiet, lanes) < GRAPHIC_CONTRAST


def test_a_state_keeps_its_hue_when_it_takes_another_lightness(qapp: QApplication) -> None:
    """Dark red, wine and blue lighten on a dark palette; grey planned marks darken on white."""
    dark, light = (timeline_colours(p()).marks for p in (dark_palette, light_palette))
    for key in ("failed", "cancelled", "recovery_required", "reconciled"):
        assert abs(dark[key].hslHue() - STATE_COLOURS[key].hslHue()) <= 2, key
        assert dark[key].lightness() > STATE_COLOURS[key].lightness(), key
    for key in ("skipped", "planned", "planned_skipped"):
        assert light[key].lightness() < STATE_COLOURS[key].lightness(), key


def test_a_palette_change_repaints_in_the_new_colours(qtbot: QtBot) -> None:
    canvas = TimelineCanvas("en_US", UTC)
    qtbot.addWidget(canvas)
    light = canvas.colours.marks["failed"]
    canvas.setPalette(dark_palette())
    assert canvas.colours.marks["failed"] != light
    assert canvas.colours.marks["failed"] == timeline_colours(dark_palette()).marks["failed"]


@pytest.mark.parametrize("name", PALETTES)
def test_the_legends_swatches_are_framed_apart_from_the_window(name: str, qtbot: QtBot) -> None:
    """A band's tint is only just visible over a lane; in the legend, over the window, its
    swatch could not be seen in either palette before it had a frame."""
    palette = PALETTES[name]()
    legend = Legend()
    qtbot.addWidget(legend)
    legend.setPalette(palette)
    legend.resize(900, legend.heightForWidth(900))
    window, frame = palette.color(QPalette.ColorRole.Window), legend_frame(palette)
    assert contrast(frame, window) >= GRAPHIC_CONTRAST
    image = legend.grab().toImage()
    pixels = Counter(image.pixel(x, y) for x in range(image.width()) for y in range(image.height()))
    side = legend.fontMetrics().ascent()
    assert len(legend.entries) == 16 and pixels[frame.rgb()] >= 16 * 4 * (side - 1)
    asleep = timeline_colours(palette).bands["asleep"]
    assert pixels[asleep.rgb()] >= (side - 2) ** 2  # the band's own tint, inside its frame


def test_the_legend_wraps_between_entries_never_inside_one(qtbot: QtBot) -> None:
    legend = Legend()
    qtbot.addWidget(legend)
    one_line = legend.places(10_000)
    assert {place.y() for place in one_line} == {0}
    at_600 = {place.y() for place in legend.places(600)}
    narrowest = legend.minimumSizeHint().width()  # the widest entry's
    at_narrowest = {place.y() for place in legend.places(narrowest)}
    assert 1 < len(at_600) < len(at_narrowest) < len(legend.entries)
    assert legend.heightForWidth(narrowest) > legend.heightForWidth(600)
