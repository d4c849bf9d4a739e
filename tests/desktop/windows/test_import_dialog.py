"""The Import window (issue #25, DESIGN §15): the same dry run as ``coven import``, shown
before anything is created; Create makes the routines through the operator, all or none."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from coven_core import queries
from coven_core.model import RevisionSpec
from coven_core.schedule.timetable import Timetable
from coven_core.schedule.words import describe_timetable
from coven_desktop.desktop import Desktop
from coven_desktop.windows.import_dialog import ImportDialog

DATA = Path(__file__).parent.parent.parent / "core" / "moving" / "data"


@pytest.fixture
def dialog(desktop: Desktop, qtbot: QtBot) -> ImportDialog:
    built = ImportDialog(desktop)
    qtbot.addWidget(built)
    built.show()
    return built


def choose(dialog: ImportDialog, label: str, path: Path, loop: qasync.QEventLoop) -> None:
    dialog.source.setCurrentIndex(dialog.source.findText(label))
    dialog.path.setText(str(path))
    dialog.path.editingFinished.emit()
    loop.run_until_complete(dialog.settle())


def type_zone(dialog: ImportDialog, qtbot: QtBot, key: str) -> None:
    """A zone's key in place of what the field shows, and Enter pressed (set, not typed key
    by key: typing opens the completer's popup, which the offscreen platform warns about)."""
    typed = dialog.zone.lineEdit()
    assert typed is not None
    typed.setText(key)
    qtbot.keyClick(typed, Qt.Key.Key_Return)


def through_engine(desktop: Desktop, loop: qasync.QEventLoop, work):  # type: ignore[no-untyped-def]
    return loop.run_until_complete(desktop.service.call(work))


def names(desktop: Desktop, loop: qasync.QEventLoop) -> list[str]:
    views = through_engine(desktop, loop, lambda e: queries.list_routines(e.store))
    return [view.routine.name for view in views]


def tree_texts(dialog: ImportDialog) -> list[str]:
    found = []
    for index in range(dialog.tree.topLevelItemCount()):
        item = dialog.tree.topLevelItem(index)
        assert item is not None
        found.append(item.text(0))
        found += [item.child(c).text(0) for c in range(item.childCount())]  # type: ignore[union-attr]
    return found


def test_a_crontab_file_shows_its_dry_run_and_creates_nothing_yet(
    dialog: ImportDialog, desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    dialog.zone.setCurrentText("America/New_York")
    choose(dialog, "A crontab file", DATA / "crontab", loop)
    texts = tree_texts(dialog)
    assert "rsync-docs" in texts and "berlin-report" in texts
    assert any(text.startswith("Daylight saving: ") for text in texts)  # said aloud
    assert any("@reboot" in text for text in texts)  # not imported, by name
    assert dialog.create_button.isEnabled()
    assert dialog.create_button.text() == f"Create {len(dialog.plan.routines)} routines"  # type: ignore[union-attr]
    assert "Nothing is created until you choose Create" in dialog.summary.text()
    assert names(desktop, loop) == []


def test_the_dry_run_is_in_the_apps_language(
    desktop: Desktop, qtbot: QtBot, loop: qasync.QEventLoop
) -> None:
    """The engine's reasons and DST sentences are German in a German app (issue #22), as
    the window around them."""
    desktop.locale = "de_DE"
    dialog = ImportDialog(desktop)
    qtbot.addWidget(dialog)
    dialog.zone.setCurrentText("America/New_York")
    dialog.source.setCurrentIndex(1)  # a crontab file
    choose(dialog, dialog.source.currentText(), DATA / "crontab", loop)
    texts = tree_texts(dialog)
    assert "Nicht importiert (4)" in texts
    assert any(t.startswith("Zeile 16: @reboot ~/bin/start-agent – @reboot: Coven hat keinen")
               for t in texts)  # fmt: skip
    differences = [t for t in texts if t.startswith("Sommerzeit: ")]
    assert differences and all(t.startswith("Sommerzeit: cron würde ") for t in differences)
    assert dialog.summary.text().startswith(
        "Würde 15 Routinen anlegen. 4 Zeilen können nicht importiert werden. "
    )
    assert dialog.create_button.text() == "15 Routinen anlegen"


def test_create_makes_every_routine_through_the_engine(
    dialog: ImportDialog, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    choose(dialog, "A systemd timer", DATA / "backup.timer", loop)
    with qtbot.waitSignal(dialog.imported) as created:
        qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
        loop.run_until_complete(dialog.settle())
    assert names(desktop, loop) == created.args[0] == ["backup"]
    view = through_engine(desktop, loop, lambda e: queries.show(e.store, "backup"))
    assert view.revision is not None and view.revision.spec.timezone == "Europe/Berlin"
    assert not dialog.create_button.isEnabled()  # done: a second click cannot double it
    assert dialog.summary.text() == "Created 1 routine."


def test_a_taken_name_refuses_the_whole_import(
    dialog: ImportDialog, desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    spec = RevisionSpec(schedule="@daily", timezone="UTC", argv=("/bin/true",))
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.add_routine("backup", spec)))
    choose(dialog, "A systemd timer", DATA / "backup.timer", loop)
    dialog.create_button.click()
    loop.run_until_complete(dialog.settle())
    assert "'backup' already exist" in dialog.error.text() and dialog.error.isVisible()
    assert names(desktop, loop) == ["backup"]


def test_a_taken_name_is_refused_in_the_apps_language(
    desktop: Desktop, qtbot: QtBot, loop: qasync.QEventLoop
) -> None:
    """The operator's refusal reaches the window in German, singular for one name."""
    desktop.locale = "de_DE"
    dialog = ImportDialog(desktop)
    qtbot.addWidget(dialog)
    spec = RevisionSpec(schedule="@daily", timezone="UTC", argv=("/bin/true",))
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.add_routine("backup", spec)))
    dialog.source.setCurrentIndex(2)  # a systemd timer
    choose(dialog, dialog.source.currentText(), DATA / "backup.timer", loop)
    dialog.create_button.click()
    loop.run_until_complete(dialog.settle())
    assert dialog.error.text() == (
        "die Routine 'backup' gibt es schon: benennen Sie sie zuerst um oder löschen Sie sie"
    )


def test_a_file_that_is_not_there_is_named(
    dialog: ImportDialog, tmp_path: Path, loop: qasync.QEventLoop
) -> None:
    choose(dialog, "A launchd job", tmp_path / "gone.plist", loop)
    assert "gone.plist' is not a readable file" in dialog.error.text()
    assert not dialog.create_button.isEnabled()


def test_my_crontab_reads_crontab_l(
    desktop: Desktop, qtbot: QtBot, loop: qasync.QEventLoop, tmp_path: Path, monkeypatch
) -> None:
    program = tmp_path / "bin" / "crontab"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\necho '0 7 * * 1-5 /usr/bin/fetch-news'\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{program.parent}:/usr/bin:/bin")
    dialog = ImportDialog(desktop)  # "My crontab" is the first choice: read at once
    qtbot.addWidget(dialog)
    loop.run_until_complete(dialog.settle())
    assert not dialog.path.isVisibleTo(dialog)  # no file to choose
    assert tree_texts(dialog)[0] == "fetch-news"


def test_escape_closes_it(dialog: ImportDialog, qtbot: QtBot) -> None:
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_the_routines_page_opens_it_and_shows_what_it_made(
    desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    page = desktop.window.show_page("routines")
    page.action["import"].trigger()  # type: ignore[union-attr]
    dialog = page.importer  # type: ignore[union-attr]
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    choose(dialog, "A systemd timer", DATA / "backup.timer", loop)
    dialog.create_button.click()
    loop.run_until_complete(dialog.settle())
    loop.run_until_complete(page.settle())  # type: ignore[union-attr]
    assert page.model.row_of("backup") == 0  # type: ignore[union-attr]


def schedules(dialog: ImportDialog) -> dict[str, tuple[str, str]]:
    """Each planned routine's schedule cell and its tooltip."""
    found = {}
    for index in range(dialog.tree.topLevelItemCount()):
        item = dialog.tree.topLevelItem(index)
        assert item is not None
        found[item.text(0)] = (item.text(1), item.toolTip(1))
    return found


def test_each_schedule_is_said_as_the_routines_page_will_say_it(
    desktop: Desktop, qtbot: QtBot, loop: qasync.QEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not "cron:30 2 * * * in local": the words and the zone the routine will run in; the
    whole sentence and the notation it stores are one hover away."""
    monkeypatch.setenv("TZ", "Europe/Vienna")  # the computer's zone, for "local"
    dialog = ImportDialog(desktop)
    qtbot.addWidget(dialog)
    choose(dialog, "A crontab file", DATA / "crontab", loop)
    daily = routines_page_words("cron:30 2 * * *", desktop.locale)  # "Every day at 2:30 AM"
    assert daily.startswith("Every day at 2:30")
    words = f"{daily} (this computer's zone, Europe/Vienna)"
    assert schedules(dialog)["rsync-docs"] == (words, f"{words}\ncron:30 2 * * * in local")
    type_zone(dialog, qtbot, "America/New_York")
    loop.run_until_complete(dialog.settle())
    assert schedules(dialog)["rsync-docs"][0] == f"{daily} (America/New_York)"
    desktop.locale = "de_DE"
    dialog.read()
    loop.run_until_complete(dialog.settle())
    german = routines_page_words("cron:30 2 * * *", "de_DE")
    assert german.startswith("Täglich um ")
    assert schedules(dialog)["rsync-docs"][0] == f"{german} (America/New_York)"


def test_the_zone_field_names_this_computers_zone_not_the_engines_word(
    desktop: Desktop, qtbot: QtBot, loop: qasync.QEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Europe/Vienna")
    dialog = ImportDialog(desktop)
    qtbot.addWidget(dialog)
    assert dialog.zone.currentText() == "Europe/Vienna (this computer's zone)"
    assert "Europe/Vienna" in dialog.zone.itemData(0, Qt.ItemDataRole.ToolTipRole)
    choose(dialog, "A crontab file", DATA / "crontab", loop)
    type_zone(dialog, qtbot, "America/New_York")
    loop.run_until_complete(dialog.settle())
    assert "(America/New_York)" in schedules(dialog)["rsync-docs"][0]
    dialog.zone.setCurrentIndex(0)  # this computer's, picked from the list again
    dialog.zone.activated.emit(0)
    loop.run_until_complete(dialog.settle())
    assert "(this computer's zone, Europe/Vienna)" in schedules(dialog)["rsync-docs"][0]
    qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(dialog.settle())
    view = through_engine(desktop, loop, lambda e: queries.show(e.store, "rsync-docs"))
    # bound to the computer's key as it is created (§3.2)
    assert view.revision is not None and view.revision.spec.timezone == "Europe/Vienna"


def routines_page_words(schedule: str, locale: str) -> str:
    timetable = Timetable.build(schedule, "UTC", datetime(2026, 1, 1, tzinfo=UTC))
    return describe_timetable(timetable, locale)
