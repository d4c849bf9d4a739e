"""The outcome chips: every outcome has a colour, and its word reads on it."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QImage, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QStyle, QTableView
from pytestqt.qtbot import QtBot

from coven_desktop.windows.chips import (
    CHIP_ICON_ROLE,
    ChipDelegate,
    ChipRole,
    chip_colour,
    chip_style,
    contrast,
    text_on,
)
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


def test_a_thousand_chips_of_one_state_share_one_icon(qtbot: QtBot) -> None:
    """A new icon for every painted chip filled Qt's pixmap cache (bench_week_rss)."""
    model = QStandardItemModel(1000, 1)
    named = ("emblem-default", QStyle.StandardPixmap.SP_DialogApplyButton)
    for row in range(1000):
        item = QStandardItem("Active")
        item.setData("active", ChipRole)
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
    assert list(delegate._icons) == [named]
