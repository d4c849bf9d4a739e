"""The outcome chips: every outcome has a colour, and its word reads on it."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from coven_desktop.windows.chips import chip_colour, chip_style, contrast, text_on
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
