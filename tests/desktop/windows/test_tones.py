"""State colours come from the palette and read on light and dark windows (issues #21, #22):
the tones themselves, and the windows that draw errors and warnings in them."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QFrame, QLabel, QWidget

from coven_core.integrity.doctor import Finding, Report
from coven_desktop.demo.attention import dark_palette
from coven_desktop.windows.diagnostics import Page as DiagnosticsPage
from coven_desktop.windows.routine_editor import RoutineEditor
from coven_desktop.windows.tones import TEXT_CONTRAST, Tone, Tones, backgrounds, colour, contrast


def light_palette() -> QPalette:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    return app.style().standardPalette()


@pytest.mark.parametrize("palette", [light_palette, dark_palette], ids=["light", "dark"])
@pytest.mark.parametrize("tone", list(Tone))
def test_a_tone_reads_on_every_background_of_the_page(qapp, palette, tone: Tone) -> None:  # type: ignore[no-untyped-def]
    chosen = palette()
    found = colour(chosen, tone)
    for background in backgrounds(chosen):
        assert contrast(found, background) >= TEXT_CONTRAST, (found.name(), background.name())
    assert abs(found.hslHueF() * 360 - tone.value) < 2  # still amber, still red


def test_the_tones_of_light_and_dark_differ() -> None:
    assert colour(light_palette(), Tone.WARNING).lightnessF() < 0.5
    assert colour(dark_palette(), Tone.WARNING).lightnessF() > 0.5


def test_contrast_is_wcag_s_ratio() -> None:
    assert contrast(QColor("black"), QColor("white")) == pytest.approx(21)
    assert contrast(QColor("#777777"), QColor("#777777")) == pytest.approx(1)


def test_painted_widgets_follow_a_palette_change(qapp) -> None:  # type: ignore[no-untyped-def]
    owner = QWidget()
    label, banner = QLabel("still running", owner), QFrame(owner)
    tones = Tones(owner)
    tones.text(label, Tone.WARNING, bold=True)
    tones.banner(banner, Tone.WARNING)
    light = label.styleSheet()
    assert colour(owner.palette(), Tone.WARNING).name() in light and "bold" in light
    owner.setPalette(dark_palette())
    QCoreApplication.sendPostedEvents(None, QEvent.Type.PaletteChange)
    dark = colour(dark_palette(), Tone.WARNING).name()
    assert dark in label.styleSheet() and dark in banner.styleSheet()
    assert tones.colour(Tone.WARNING).name() == dark


def _stylesheet_colour(widget: QWidget) -> QColor:
    found = re.search(r"color: (#[0-9a-f]{6})", widget.styleSheet())
    assert found, widget.styleSheet()
    return QColor(found.group(1))


def _on_palette(widget: QWidget, palette: QPalette) -> QColor:
    """``widget`` under ``palette`` (its tones painted again): the window colour text is on."""
    widget.setPalette(palette)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.PaletteChange)
    return widget.palette().color(QPalette.ColorRole.Window)


@pytest.mark.parametrize("palette", [light_palette, dark_palette], ids=["light", "dark"])
def test_the_editors_errors_read_on_its_window(desktop, palette) -> None:  # type: ignore[no-untyped-def]
    """The routine editor's inline errors were a fixed dark red, unreadable on a dark window."""
    editor = RoutineEditor(desktop)
    window = _on_palette(editor, palette())
    assert editor.errors  # the form's line and every field's
    for key, label in editor.errors.items():
        assert contrast(_stylesheet_colour(label), window) >= TEXT_CONTRAST, key
    editor.deleteLater()


@pytest.mark.parametrize("palette", [light_palette, dark_palette], ids=["light", "dark"])
def test_the_doctors_errors_and_warnings_read_in_diagnostics(desktop, palette) -> None:  # type: ignore[no-untyped-def]
    page = DiagnosticsPage(desktop)
    findings = [Finding("audit", "error", "broken"), Finding("growth", "warning", "large")]
    page.show_report(Report(desktop.clock.now_utc(), findings))
    _on_palette(page, palette())
    table = page.palette().color(QPalette.ColorRole.Base)
    for row in range(2):
        painted = QColor(page.finding_model.row(row).colour)
        assert contrast(painted, table) >= TEXT_CONTRAST, page.finding_model.row(row).cells
    page.deleteLater()


@pytest.mark.parametrize("palette", [light_palette, dark_palette], ids=["light", "dark"])
def test_the_side_bar_s_icons_show_on_its_background(qapp, palette) -> None:  # type: ignore[no-untyped-def]
    """The Timeline's fallback was the style's black arrow: gone on a dark side bar."""
    from coven_desktop.windows import PAGES
    from coven_desktop.windows.sidebar import SideBar

    bar = SideBar()
    bar.setPalette(palette())
    background = bar.palette().color(QPalette.ColorRole.Base)
    row = next(i for i, info in enumerate(PAGES) if info.key == "timeline")
    item = bar.item(row)
    assert item is not None
    image = item.icon().pixmap(bar.iconSize()).toImage()
    drawn = [image.pixelColor(x, y) for x in range(image.width()) for y in range(image.height())]
    ink = [pixel for pixel in drawn if pixel.alpha() > 200]
    assert ink and max(contrast(pixel, background) for pixel in ink) >= 3.0  # an icon's 3:1
    bar.deleteLater()
