"""The Export window (DESIGN §15): the same files as ``coven export``, routine by routine,
with what does not carry over; nothing is written until Export, nothing replaced unasked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from coven_core.model import RevisionSpec
from coven_core.scheduling import routines
from coven_desktop.desktop import Desktop
from coven_desktop.windows.export_dialog import ExportDialog

LAST_FRIDAY = "rrule:FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=18;BYMINUTE=0"  # no OnCalendar= form


def add(desktop: Desktop, loop: qasync.QEventLoop, name: str, schedule: str) -> None:
    spec = RevisionSpec(schedule, "Europe/Berlin", ("/usr/bin/backup", "--all"))
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.add_routine(name, spec)))


@pytest.fixture
def dialog(desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path) -> ExportDialog:
    add(desktop, loop, "backup", "30 2 * * *")
    add(desktop, loop, "month-end", LAST_FRIDAY)
    built = ExportDialog(desktop)
    qtbot.addWidget(built)
    built.folder.setText(str(tmp_path / "out"))
    built.show()
    loop.run_until_complete(built.settle())
    return built


def rows(dialog: ExportDialog) -> dict[str, tuple[bool, bool, list[str]]]:
    """Each routine: ticked, can be ticked, its notes."""
    found = {}
    for index in range(dialog.tree.topLevelItemCount()):
        item = dialog.tree.topLevelItem(index)
        assert item is not None
        notes = [item.child(n).text(0) for n in range(item.childCount())]  # type: ignore[union-attr]
        enabled = bool(item.flags() & Qt.ItemFlag.ItemIsEnabled)
        found[item.text(0)] = (item.checkState(0) == Qt.CheckState.Checked, enabled, notes)
    return found


def export(dialog: ExportDialog, loop: qasync.QEventLoop, qtbot: QtBot) -> None:
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(dialog.settle())


def test_a_dry_run_shows_each_routine_and_writes_nothing_yet(
    dialog: ExportDialog, tmp_path: Path
) -> None:
    shown = rows(dialog)
    assert shown["backup"][:2] == (True, True)
    assert shown["month-end"][:2] == (False, False)  # left out, and why
    assert any("OnCalendar" in note for note in shown["month-end"][2])
    assert "1 routine cannot be exported" in dialog.summary.text()
    assert "Nothing is written until you choose Export" in dialog.summary.text()
    assert dialog.export_button.text() == "Export 1 routine"
    assert not (tmp_path / "out").exists()


def test_export_writes_the_ticked_routines_systemd_files(
    dialog: ExportDialog, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    export(dialog, loop, qtbot)
    written = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert written == ["coven-backup.service", "coven-backup.timer"]
    timer = (tmp_path / "out" / "coven-backup.timer").read_text()
    assert "OnCalendar=*-*-* 02:30:00 Europe/Berlin" in timer
    assert dialog.summary.text() == f"Wrote 2 files into {tmp_path / 'out'}."
    assert dialog.open_folder.isVisible()


def test_an_unticked_routine_is_not_written(
    dialog: ExportDialog, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    dialog.tree.topLevelItem(0).setCheckState(0, Qt.CheckState.Unchecked)  # type: ignore[union-attr]
    assert not dialog.export_button.isEnabled() and dialog.export_button.text() == "Export"
    export(dialog, loop, qtbot)
    assert not (tmp_path / "out").exists()


def test_a_file_already_there_is_replaced_only_when_the_person_says_so(
    dialog: ExportDialog, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    (tmp_path / "out").mkdir()
    mine = tmp_path / "out" / "coven-backup.timer"
    mine.write_text("# my own timer\n")
    export(dialog, loop, qtbot)
    box = dialog.confirmation
    assert box is not None and box.isVisible() and "coven-backup.timer" in box.informativeText()
    qtbot.mouseClick(box.button(QMessageBox.StandardButton.Cancel), Qt.MouseButton.LeftButton)
    loop.run_until_complete(dialog.settle())
    assert mine.read_text() == "# my own timer\n"  # kept
    assert not (tmp_path / "out" / "coven-backup.service").exists()
    export(dialog, loop, qtbot)
    replace = next(b for b in dialog.confirmation.buttons()  # type: ignore[union-attr]
                   if dialog.confirmation.buttonRole(b) is QMessageBox.ButtonRole.AcceptRole)  # type: ignore[union-attr]  # fmt: skip
    qtbot.mouseClick(replace, Qt.MouseButton.LeftButton)
    loop.run_until_complete(dialog.settle())
    assert "OnCalendar=" in mine.read_text()


def test_kubernetes_asks_for_the_image_first_then_writes_cronjobs(
    dialog: ExportDialog, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    dialog.target.setCurrentIndex(1)
    loop.run_until_complete(dialog.settle())
    assert dialog.image.isVisible() and "image" in dialog.error.text()
    assert not dialog.export_button.isEnabled()
    qtbot.keyClicks(dialog.image, "registry.example.com/tools:1.4")
    dialog.image.editingFinished.emit()
    loop.run_until_complete(dialog.settle())
    assert not dialog.error.isVisible() and dialog.export_button.isEnabled()
    export(dialog, loop, qtbot)
    (written,) = (tmp_path / "out").iterdir()
    doc = json.loads(written.read_text())
    assert doc["kind"] == "CronJob" and doc["spec"]["timeZone"] == "Europe/Berlin"
    container = doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example.com/tools:1.4"


def test_a_broken_routine_is_left_out_and_the_others_still_go(
    desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    """A routine whose zone the tz database does not know refused the whole dry run; the
    window shows it among the rest, with why, as a routine the target cannot express."""
    add(desktop, loop, "backup", "30 2 * * *")
    add(desktop, loop, "sync", "*/15 * * * *")

    def corrupt(engine) -> None:  # type: ignore[no-untyped-def]
        engine.store.conn.execute(
            "UPDATE revisions SET timezone = 'Mars/Olympus' "
            "WHERE routine_id = (SELECT id FROM routines WHERE name = 'sync')"
        )
        routines.timetable.cache_clear()

    loop.run_until_complete(desktop.service.call(corrupt))
    dialog = ExportDialog(desktop)
    qtbot.addWidget(dialog)
    dialog.folder.setText(str(tmp_path / "out"))
    loop.run_until_complete(dialog.settle())
    shown = rows(dialog)
    assert not dialog.error.text()
    assert shown["backup"][:2] == (True, True) and shown["sync"][:2] == (False, False)
    (why,) = shown["sync"][2]
    assert "Mars/Olympus" in why
    export(dialog, loop, qtbot)
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [
        "coven-backup.service", "coven-backup.timer",
    ]  # fmt: skip
