"""State colours come from the palette and read on light and dark windows (issues #21, #22)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QFrame, QLabel, QWidget

from coven_desktop.demo.attention import dark_palette
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
    from PySide6.QtGui import QColor

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
