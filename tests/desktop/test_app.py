"""The desktop app starts offscreen and shows its main window."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pytestqt.qtbot import QtBot

from coven_desktop.app import APP_NAME, MainWindow


def test_main_window_names_the_engine_and_tz_database(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.windowTitle() == APP_NAME
    assert "tz database" in window.engine_info.text()


def test_quit_after_ready_starts_fully_reports_and_quits(tmp_path: Path) -> None:
    """The smoke test installed bundles get (tests/packaging runs it on the frozen app)."""
    data = tmp_path / "data"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    started = subprocess.run(
        [sys.executable, "-m", "coven_desktop.app", "--data-dir", str(data), "--quit-after-ready"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    report = json.loads(started.stdout.strip().splitlines()[-1])
    assert report == {
        "ready": True, "state": "idle", "window_shown": True, "tray_icon_renders": True,
        "window_icon_renders": True, "data_dir": str(data),
    }  # fmt: skip
    assert "Traceback" not in started.stderr
