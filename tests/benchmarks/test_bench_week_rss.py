"""benchmarks/bench_week_rss.py, run small: a simulated day with the main window open."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pytestqt.qtbot import QtBot

from benchmarks import bench_week_rss
from tests.benchmarks.conftest import judged_rows


# The offscreen platform has no tray to embed into: Qt says so when the icon is shown.
@pytest.mark.qt_log_ignore("No such signal QPlatformNativeInterface::systemTrayWindowChanged")
def test_rss_after_simulated_days_is_measured_against_the_start(qtbot: QtBot) -> None:
    week, figures = bench_week_rss.measure(days=1, step=timedelta(hours=6))
    (rss,) = judged_rows("bench_week_rss", figures)
    assert rss.unit == "MiB" and rss.target == bench_week_rss.TARGET
    assert week.runs > 300  # the day's runs happened: 3 every five minutes alone make 864
    assert week.widgets[0] == week.widgets[1]  # the day built no window nor page
