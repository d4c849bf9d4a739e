"""The tray menu with many routines: the soonest few directly, the rest one submenu away,
every submenu filled only when it opens."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from coven_core.model import RoutineState
from coven_core.views.overview import Overview, RoutineLine, TrayState
from coven_desktop.tray import DIRECT_ROUTINES, Tray

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def many(count: int) -> Overview:
    """``count`` routines, r000 due last and the highest number first; one paused."""
    lines = [RoutineLine(f"r{i:03d}", RoutineState.ACTIVE, NOW + timedelta(minutes=count - i))
             for i in range(count)]  # fmt: skip
    lines[0] = RoutineLine("r000", RoutineState.PAUSED, None)
    return Overview(TrayState.IDLE, standby=False, paused_all=False, attention=0, error=None,
                    next_run=None, routines=lines)  # fmt: skip


@pytest.fixture
def tray(qapp) -> Iterator[Tray]:  # type: ignore[no-untyped-def]
    built = Tray()
    yield built
    built.dispose()
    built.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def submenus(menu: QMenu) -> dict[str, QMenu]:
    return {a.text(): a.menu() for a in menu.actions() if a.menu() is not None}


def opened(menu: QMenu) -> list[str]:
    menu.aboutToShow.emit()
    return [a.text() for a in menu.actions()]


def test_a_thousand_routines_make_a_dozen_menus(tray: Tray) -> None:
    tray.update(many(1000), NOW, "en")
    top = submenus(tray.menu)
    expected = [f"r{i:03d}" for i in range(999, 999 - DIRECT_ROUTINES, -1)]  # soonest first
    assert list(top) == [*expected, "All routines (1000)"]
    assert len(tray.menu.findChildren(QMenu)) == DIRECT_ROUTINES + 1


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
