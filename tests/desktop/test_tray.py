"""The tray menu: a top level that does not move, submenus that fit each routine's state, a
cancel that asks once, and many routines one submenu away (issues #7, #21)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtWidgets import QMenu, QMessageBox
from pytestqt.qtbot import QtBot

from coven_core.model import RoutineState
from coven_core.views.notices import NoticeKind
from coven_core.views.overview import Counts, Overview, RoutineLine, RunningRun, TrayState
from coven_desktop.tray import DIRECT_ROUTINES, Tray

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def many(count: int) -> Overview:
    """``count`` routines, r000 due last and the highest number first; one paused."""
    lines = [RoutineLine(f"r{i:03d}", RoutineState.ACTIVE, NOW + timedelta(minutes=count - i))
             for i in range(count)]  # fmt: skip
    lines[0] = RoutineLine("r000", RoutineState.PAUSED, None)
    return Overview(TrayState.IDLE, standby=False, paused_all=False, attention=0, error=None,
                    next_run=None, routines=lines)  # fmt: skip


def overview(
    *, running: bool = False, attention: int = 0, paused_all: bool = False, failed: int = 0
) -> Overview:
    """backup (active, due at 14:30), sync (quarantined), notes (paused)."""
    due = NOW + timedelta(hours=2, minutes=30)
    lines = [
        RoutineLine("backup", RoutineState.ACTIVE, due),
        RoutineLine("sync", RoutineState.QUARANTINED, None),
        RoutineLine("notes", RoutineState.PAUSED, None),
    ]
    runs = [RunningRun("run-1", "backup", NOW - timedelta(minutes=3))] if running else []
    counts = Counts(attention, failed, 1, 0, len(runs))
    state = TrayState.ATTENTION if attention else TrayState.ERROR
    return Overview(state, standby=False, paused_all=paused_all, attention=attention,
                    error=None, next_run=None if paused_all else ("backup", due), running=runs,
                    routines=lines, counts=counts)  # fmt: skip


@pytest.fixture
def tray(qapp) -> Iterator[Tray]:  # type: ignore[no-untyped-def]
    built = Tray()
    yield built
    built.dispose()
    built.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def submenus(menu: QMenu) -> dict[str, QMenu]:
    """The routines' submenus (and "All routines"), by title."""
    return {
        a.text(): a.menu()
        for a in menu.actions()
        if a.menu() is not None and a.menu().objectName().startswith("routine")
    }


def opened(menu: QMenu) -> list[str]:
    menu.aboutToShow.emit()
    return [a.text() for a in menu.actions() if not a.isSeparator()]


def top_level(tray: Tray) -> list[str]:
    """Each top-level item by its role (its object name, the routine's for a routine)."""
    return [
        (a.menu().objectName() if a.menu() else a.objectName()) or "?"
        for a in tray.menu.actions()
        if not a.isSeparator()
    ]


def named(menu: QMenu, name: str):  # type: ignore[no-untyped-def]
    return next(a for a in menu.actions() if (a.menu() or a).objectName() == name)


def test_a_thousand_routines_make_a_dozen_menus(tray: Tray) -> None:
    tray.update(many(1000), NOW, "en")
    top = submenus(tray.menu)
    expected = [f"r{i:03d}" for i in range(999, 999 - DIRECT_ROUTINES, -1)]  # soonest first
    assert list(top) == [*expected, "All routines (1000)"]
    # the routines' menus, "All routines", "Running" and "Notifications"
    assert len(tray.menu.findChildren(QMenu)) == DIRECT_ROUTINES + 3


def test_all_routines_lists_every_routine_when_it_opens(tray: Tray) -> None:
    tray.update(many(30), NOW, "en")
    everything = submenus(tray.menu)["All routines (30)"]
    assert everything.actions() == []
    assert opened(everything) == [f"r{i:03d}" for i in range(30)]
    assert opened(everything) == [f"r{i:03d}" for i in range(30)]  # filled once


def test_a_routine_submenu_offers_its_actions_and_they_emit(tray: Tray, qtbot: QtBot) -> None:
    tray.update(many(30), NOW, "en")
    everything = submenus(tray.menu)["All routines (30)"]
    opened(everything)
    paused = submenus(everything)["r000"]
    assert opened(paused) == ["Run now", "Resume"]
    with qtbot.waitSignal(tray.resumeRequested) as resumed:
        next(a for a in paused.actions() if a.text() == "Resume").trigger()
    assert resumed.args == ["r000"]
    assert opened(submenus(tray.menu)["r029"]) == ["Run now", "Pause"]


def test_a_few_routines_are_all_in_the_menu_itself(tray: Tray) -> None:
    tray.update(many(3), NOW, "en")
    assert list(submenus(tray.menu)) == ["r000", "r001", "r002"]


def test_the_top_level_does_not_move_when_a_run_starts_or_a_decision_waits(tray: Tray) -> None:
    tray.update(overview(), NOW, "en_US")
    calm = top_level(tray)
    assert calm == [
        "headline", "attention", "running", "routine:backup", "routine:sync", "routine:notes",
        "pause-all", "notifications", "autostart", "open", "quit",
    ]  # fmt: skip
    assert not named(tray.menu, "running").isEnabled()
    assert not named(tray.menu, "attention").isEnabled()
    tray.update(overview(running=True, attention=1), NOW, "en_US")
    assert top_level(tray) == calm
    assert named(tray.menu, "running").isEnabled()
    assert named(tray.menu, "running").text() == "Running (1)"
    assert named(tray.menu, "attention").text() == "Needs attention (1)…"


def test_each_routine_offers_what_fits_its_state(tray: Tray, qtbot: QtBot) -> None:
    tray.update(overview(running=True), NOW, "en_US")
    menus = submenus(tray.menu)
    assert opened(menus["backup"]) == ["Run now", "Pause", "Cancel…"]
    assert opened(menus["sync"]) == ["Probe once", "Release"]
    assert opened(menus["notes"]) == ["Run now", "Resume"]
    with qtbot.waitSignal(tray.probeRequested) as probed:
        next(a for a in menus["sync"].actions() if a.text() == "Probe once").trigger()
    assert probed.args == ["sync"]
    with qtbot.waitSignal(tray.releaseRequested) as released:
        next(a for a in menus["sync"].actions() if a.text() == "Release").trigger()
    assert released.args == ["sync"]


def _answer(box: QMessageBox, text: str, qtbot: QtBot) -> None:
    button = next(b for b in box.buttons() if b.text() == text)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_cancel_asks_once_and_only_a_yes_cancels(tray: Tray, qtbot: QtBot) -> None:
    tray.update(overview(running=True), NOW, "en_US")
    running = named(tray.menu, "running").menu()
    (line,) = opened(running)
    assert line.startswith("Cancel backup (since ") and line.endswith(")…")
    cancels: list[str] = []
    tray.cancelRequested.connect(cancels.append)
    running.actions()[0].trigger()  # returns at once: the question is open(), never exec()
    box = tray.confirmation
    assert box is not None and box.isVisible()
    assert box.text() == "Cancel the running backup?"
    _answer(box, "Keep it running", qtbot)
    assert cancels == [] and tray.confirmation is None
    running.actions()[0].trigger()
    assert tray.confirmation is not None
    _answer(tray.confirmation, "Cancel the run", qtbot)
    assert cancels == ["run-1"]


def test_a_routines_cancel_asks_too_and_cancels_its_runs(tray: Tray, qtbot: QtBot) -> None:
    tray.update(overview(running=True), NOW, "en_US")
    backup = submenus(tray.menu)["backup"]
    opened(backup)
    with qtbot.waitSignal(tray.cancelRoutineRequested) as cancelled:
        next(a for a in backup.actions() if a.text() == "Cancel…").trigger()
        assert tray.confirmation is not None
        _answer(tray.confirmation, "Cancel the run", qtbot)
    assert cancelled.args == ["backup"]


def test_the_tooltip_and_headline_count_what_matters(tray: Tray) -> None:
    tray.update(overview(running=True, failed=1), NOW, "en_US")
    tip = tray.icon.toolTip()
    assert tip == "Coven\n1 failed · 1 quarantined · 1 running; next: backup at 2:30\u202fPM"
    assert named(tray.menu, "headline").text() == tip.splitlines()[1]
    assert tray.state is TrayState.ERROR


def test_a_headline_with_news_goes_where_the_news_is(tray: Tray, qtbot: QtBot) -> None:
    """It said "2 failed" and could not be clicked: the failures were two menus away."""
    tray.update(overview(failed=2), NOW, "en_US")
    headline = named(tray.menu, "headline")
    assert headline.isEnabled() and headline.text().startswith("2 failed")
    with qtbot.waitSignal(tray.pageRequested) as asked:
        headline.trigger()
    assert asked.args == ["runs"]
    tray.update(overview(), NOW, "en_US")  # only the quarantined routine left
    with qtbot.waitSignal(tray.pageRequested) as asked:
        named(tray.menu, "headline").trigger()
    assert asked.args == ["quarantine"]
    tray.update(many(3), NOW, "en_US")  # nothing to look at: it only says what comes next
    assert not named(tray.menu, "headline").isEnabled()


def test_after_pause_all_the_menu_names_no_next_run(tray: Tray) -> None:
    tray.update(overview(paused_all=True), NOW, "en_US")
    headline = named(tray.menu, "headline").text()
    assert "next" not in headline and "all scheduling paused" in headline
    assert named(tray.menu, "pause-all").text() == "Resume all"


def test_each_kind_of_notification_has_a_switch(tray: Tray, qtbot: QtBot) -> None:
    tray.notices = {NoticeKind.FAILED: True, NoticeKind.CANCELLED: False}
    tray.update(overview(), NOW, "en_US")
    switches = named(tray.menu, "notifications").menu()
    failed = named(switches, "notice:failed")
    assert failed.isChecked() and not named(switches, "notice:cancelled").isChecked()
    with qtbot.waitSignal(tray.noticeToggled) as toggled:
        failed.trigger()
    assert toggled.args == [NoticeKind.FAILED, False]
    assert tray.notices[NoticeKind.FAILED] is False


def test_quitting_says_what_it_waits_for_and_no_news_changes_it(tray: Tray) -> None:
    tray.update(overview(running=True), NOW, "en_US")
    tray.show_quitting("Quitting: waiting for 1 running command…")
    tray.update(overview(), NOW, "en_US")
    assert tray.icon.toolTip() == "Coven\nQuitting: waiting for 1 running command…"
    assert [a.text() for a in tray.menu.actions()] == ["Quitting: waiting for 1 running command…"]
