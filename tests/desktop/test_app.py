"""The desktop app starts offscreen and shows its main window."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from coven_desktop.app import APP_NAME, MainWindow


def test_main_window_names_the_engine_and_tz_database(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.windowTitle() == APP_NAME
    assert "tz database" in window.engine_info.text()
