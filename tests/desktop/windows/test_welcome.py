"""The Welcome window: shown first while there are no routines, one click to the Routines
window with a daily backup as the example, and where the (private) data lives (issue #10)."""

from __future__ import annotations

import asyncio
import shlex
import stat
from pathlib import Path

import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from coven_core.clock import VirtualClock
from coven_core.model import RevisionSpec
from coven_desktop.desktop import Desktop
from coven_desktop.windows import welcome
from tests.desktop.conftest import T0

CRONTABS = Path(__file__).parent.parent.parent / "core" / "moving" / "data"


def _welcome(desktop: Desktop) -> welcome.Page:
    page = desktop.window.pages["welcome"]
    assert isinstance(page, welcome.Page)
    return page


def test_with_no_routines_the_window_opens_on_the_welcome(desktop: Desktop) -> None:
    page = _welcome(desktop)
    assert desktop.window.stack.currentWidget() is page
    assert page.add_first.text() == "Add your first routine"
    # one thing to do first, and one way to bring routines along; no wizard
    assert page.findChildren(QPushButton) == [page.add_first, page.import_them]
    assert not desktop.window.isModal()  # the tray stays usable


def test_with_a_routine_the_window_opens_on_the_routines(
    tmp_path: Path, loop: qasync.QEventLoop
) -> None:
    spec = RevisionSpec(schedule="@yearly", timezone="UTC", argv=("/bin/true",))
    first = Desktop(tmp_path / "data", VirtualClock(T0, autojump=False))
    loop.run_until_complete(first.start())
    loop.run_until_complete(first.service.call(lambda e: e.operator.add_routine("r", spec)))
    loop.run_until_complete(first.close(5))
    again = Desktop(tmp_path / "data", VirtualClock(T0, autojump=False))
    loop.run_until_complete(again.start())
    try:
        assert "welcome" not in again.window.pages and "routines" in again.window.pages
    finally:
        loop.run_until_complete(again.close(5))
    first.deleteLater()
    again.deleteLater()
    loop.run_until_complete(asyncio.sleep(0))  # let Qt run the deferred deletes


def test_the_example_is_a_daily_backup_at_half_past_two(desktop: Desktop) -> None:
    page = _welcome(desktop)
    shown = _shown(page)
    assert "a backup every day at 2:30" in shown and "AM" in shown  # en_US, through Babel
    assert page.command in shown
    assert shlex.split(page.command) == [
        "rsync",
        "-a",
        str(Path.home() / "Documents"),
        "/mnt/backup",
    ]


def test_the_button_shows_the_routines_window_with_the_example(
    desktop: Desktop, qtbot: QtBot, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    opened: list[dict[str, str]] = []
    real_show_page = desktop.window.show_page

    def show_page(key: str) -> QWidget | None:
        page = real_show_page(key)
        if page is not None and key == "routines":  # the editor arrives with issue #8
            monkeypatch.setattr(
                page, "open_editor", lambda **fields: opened.append(fields), raising=False
            )
        return page

    monkeypatch.setattr(desktop.window, "show_page", show_page)
    qtbot.mouseClick(_welcome(desktop).add_first, Qt.MouseButton.LeftButton)
    assert desktop.window.stack.currentWidget() is desktop.window.pages["routines"]
    assert opened == [
        {"name": "backup", "schedule": "30 2 * * *", "command": _welcome(desktop).command}
    ]


def test_the_button_works_before_the_routines_window_has_an_editor(
    desktop: Desktop, qtbot: QtBot
) -> None:
    page = _welcome(desktop)
    qtbot.mouseClick(page.add_first, Qt.MouseButton.LeftButton)
    assert desktop.window.stack.currentWidget() is desktop.window.pages["routines"]
    assert desktop.window.sidebar.currentRow() == 1


def test_the_data_directory_is_shown_and_is_private(desktop: Desktop) -> None:
    page = _welcome(desktop)
    assert str(desktop.data_dir) in page.data_dir.text()
    assert stat.S_IMODE(desktop.data_dir.stat().st_mode) == 0o700  # DESIGN §13


def test_the_example_time_is_in_the_users_locale(desktop: Desktop) -> None:
    desktop.locale = "de_DE"
    page = welcome.Page(desktop)
    try:
        assert "02:30" in _shown(page) and "AM" not in _shown(page)
    finally:
        page.deleteLater()


def _shown(page: welcome.Page) -> str:
    return " ".join(label.text() for label in page.findChildren(QLabel))


def test_routines_from_elsewhere_are_one_click_away(desktop: Desktop, qtbot: QtBot) -> None:
    page = _welcome(desktop)
    qtbot.mouseClick(page.import_them, Qt.MouseButton.LeftButton)
    assert page.importer is not None and page.importer.isVisible()
    assert not page.importer.isModal()
    page.importer.close()


def test_after_an_import_the_window_shows_the_routines_it_created(
    desktop: Desktop, qtbot: QtBot, loop: qasync.QEventLoop
) -> None:
    """Seen on X: four routines imported from the welcome, and the window still said
    "Add your first routine" behind the Import window."""
    page = _welcome(desktop)
    qtbot.mouseClick(page.import_them, Qt.MouseButton.LeftButton)
    importer = page.importer
    assert importer is not None
    importer.source.setCurrentIndex(importer.source.findText("A crontab file"))
    importer.path.setText(str(CRONTABS / "crontab"))
    importer.path.editingFinished.emit()
    loop.run_until_complete(importer.settle())
    created = [routine.name for routine in importer.plan.routines]  # type: ignore[union-attr]
    qtbot.mouseClick(importer.create_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(importer.settle())
    routines = desktop.window.pages["routines"]
    loop.run_until_complete(routines.settle())
    assert desktop.window.stack.currentWidget() is routines
    assert routines.selected().name == created[0]
    assert importer.isVisible()  # it still says what it created
    importer.close()
