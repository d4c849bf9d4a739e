"""benchmarks/bench_routines_page.py, run small: the real page against a bare table view."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from benchmarks import bench_routines_page
from tests.benchmarks.conftest import judged_rows


# The offscreen platform has no tray to embed into: Qt says so when the icon is shown.
@pytest.mark.qt_log_ignore("No such signal QPlatformNativeInterface::systemTrayWindowChanged")
def test_first_paint_and_a_keystroke_are_measured_against_a_bare_table(qtbot: QtBot) -> None:
    figures = bench_routines_page.measure(rounds=1, routines=40)
    first, keystroke = judged_rows("bench_routines_page", figures)
    assert first.target == keystroke.target == bench_routines_page.TARGET
    parts = [figure for figure in figures if figure.name.startswith("  of which")]
    assert len(parts) == 3 and sum(part.ours for part in parts) <= first.ours * 1.5
