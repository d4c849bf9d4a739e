"""The outcome chips: every outcome has a colour, and its word reads on it."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QIcon, QImage, QPixmap, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QStyle, QTableView
from pytestqt.qtbot import QtBot

from coven_desktop.windows import chips
from coven_desktop.windows.chips import (
    CHIP_ICON_ROLE,
    ChipDelegate,
    ChipRole,
    chip_colour,
    chip_style,
    contrast,
    text_on,
)
from coven_desktop.windows.routine_model import STATE_ICONS
from coven_desktop.windows.run_model import OutcomeWords

OUTCOMES = ["succeeded", "failed", "cancelled", "timed_out", "skipped", "recovery_required",
            "reconciled", "waiting", "starting", "running"]  # fmt: skip


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_the_word_on_each_chip_reads_at_4_5_to_1(qapp, outcome: str) -> None:  # type: ignore[no-untyped-def]
    fill = chip_colour(outcome)
    assert contrast(text_on(fill), fill) >= 4.5, (outcome, fill.name())
    assert f"background-color: {fill.name()}" in chip_style(outcome)
    assert OutcomeWords()(outcome) != outcome  # a word for people, not the key


def test_failures_and_successes_differ_and_an_unknown_outcome_still_has_a_colour(qapp) -> None:  # type: ignore[no-untyped-def]
    assert chip_colour("failed") != chip_colour("succeeded")
    assert chip_colour("no_such_outcome").isValid()
    assert contrast(QColor("black"), QColor("white")) == pytest.approx(21)


ACTIVE = ("emblem-default", QStyle.StandardPixmap.SP_DialogApplyButton)
PAUSED = ("media-playback-pause", QStyle.StandardPixmap.SP_MediaPause)


def chips_painted(qtbot: QtBot, states: list[tuple[str, object]]) -> ChipDelegate:
    """A table of one chip a row, painted twice; its delegate."""
    model = QStandardItemModel(len(states), 1)
    for row, (state, named) in enumerate(states):
        item = QStandardItem(state.capitalize())
        item.setData(state, ChipRole)
        item.setData(named, CHIP_ICON_ROLE)
        model.setItem(row, 0, item)
    table = QTableView()
    qtbot.addWidget(table)
    table.setModel(model)
    delegate = ChipDelegate(table)
    table.setItemDelegateForColumn(0, delegate)
    table.resize(300, 2000)
    image = QImage(300, 2000, QImage.Format.Format_ARGB32_Premultiplied)
    for _ in range(2):
        table.render(image)
    return delegate


def test_a_thousand_chips_of_one_state_share_one_icon(qtbot: QtBot) -> None:
    """A new icon for every painted chip filled Qt's pixmap cache (bench_week_rss)."""
    delegate = chips_painted(qtbot, [("active", ACTIVE)] * 1000)
    assert list(delegate._icons) == [ACTIVE]


def test_each_state_is_inked_once_in_its_own_ink(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    inked: list[tuple[str, str]] = []
    real = chips.inked

    def counted(icon: QIcon, ink: QColor, size: int = 14) -> QPixmap:
        inked.append((icon.name(), ink.name()))
        return real(icon, ink, size)

    monkeypatch.setattr(chips, "inked", counted)
    chips_painted(qtbot, [("active", ACTIVE), ("paused", PAUSED)] * 500)
    active, paused = (text_on(chip_colour(state)).name() for state in ("active", "paused"))
    assert sorted(ink for _name, ink in inked) == sorted([active, paused])  # not per chip


def _inked_share(pixmap: QPixmap) -> float:
    image = pixmap.toImage()
    cells = [(x, y) for x in range(image.width()) for y in range(image.height())]
    return sum(image.pixelColor(x, y).alpha() > 128 for x, y in cells) / len(cells)


@pytest.mark.parametrize("state", sorted(STATE_ICONS))
def test_every_state_icon_keeps_its_shape_once_inked(qapp, state: str) -> None:  # type: ignore[no-untyped-def]
    """Inked into a chip, an icon is one colour: a picture (the style's "preview" document
    the trial chip had) becomes a blot; a glyph stays a shape with room around it."""
    icon = chips._icon(STATE_ICONS[state], qapp.style())
    assert icon is not None
    assert 0.1 < _inked_share(chips.inked(icon, QColor("white"))) < 0.6, state


@pytest.fixture
def icon_theme(tmp_path, qapp):  # type: ignore[no-untyped-def]
    """A desktop icon theme of our own making, with its ``emblem-default`` a filled disc
    (as Adwaita's colour one is); the app's theme settings are restored afterwards."""
    root = tmp_path / "icons" / "Test"
    (root / "16x16").mkdir(parents=True)
    (root / "index.theme").write_text(
        "[Icon Theme]\nName=Test\nDirectories=16x16\n\n[16x16]\nSize=16\nType=Fixed\n"
    )
    disc = QImage(16, 16, QImage.Format.Format_ARGB32)
    disc.fill(QColor("green"))
    disc.save(str(root / "16x16" / "emblem-default.png"))
    paths, name = QIcon.themeSearchPaths(), QIcon.themeName()
    QIcon.setThemeSearchPaths([str(tmp_path / "icons")])
    QIcon.setThemeName("Test")
    yield root / "16x16"
    QIcon.setThemeSearchPaths(paths)
    QIcon.setThemeName(name)


def test_a_themes_picture_in_colour_gives_way_to_the_styles_glyph(qapp, icon_theme) -> None:  # type: ignore[no-untyped-def]
    assert QIcon.hasThemeIcon("emblem-default")  # the theme is in force
    icon = chips._icon(STATE_ICONS["active"], qapp.style())
    assert icon is not None
    assert _inked_share(chips.inked(icon, QColor("white"))) < 0.6  # not the disc


def test_a_themes_symbolic_icon_is_taken(qapp, icon_theme) -> None:  # type: ignore[no-untyped-def]
    ring = QImage(16, 16, QImage.Format.Format_ARGB32)
    ring.fill(QColor(0, 0, 0, 0))
    for x in range(16):
        ring.setPixelColor(x, 8, QColor("black"))  # a bar: a shape no style draws
    ring.save(str(icon_theme / "emblem-default-symbolic.png"))
    icon = chips._icon(STATE_ICONS["active"], qapp.style())
    assert icon is not None
    image = chips.inked(icon, QColor("white"), 16).toImage()
    assert image.pixelColor(8, 8).alpha() > 128 and image.pixelColor(8, 2).alpha() == 0
