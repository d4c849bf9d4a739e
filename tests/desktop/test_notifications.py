"""Notifications from engine events, through the desktop's one bridge (issues #18, #21): they
name the routine and the outcome, a click opens what they tell of, a storm is throttled, each
kind can be turned off (and stays off), and a wake is summed up once."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from coven_core.clock import VirtualClock
from coven_core.events import Event, EventKind
from coven_core.model import RevisionSpec
from coven_core.views.notices import Notice, NoticeKind
from coven_desktop.app_window import MainWindow
from coven_desktop.desktop import Desktop
from coven_desktop.notifications import NoticeSettings, Notifications, Shown, WakeWatch
from coven_desktop.osnotify import OsEvent
from tests.desktop.conftest import T0
from tests.desktop.helpers import add, wait_for_event


class Told(list[tuple[str, str]]):
    """The notifications shown, and futures a notification resolves (never a fixed wait)."""

    def __init__(self) -> None:
        super().__init__()
        self._awaited: list[tuple[Callable[[str], bool], asyncio.Future[str]]] = []
        self.warnings: list[bool] = []  # each shown as a warning, else as information

    def __call__(self, title: str, body: str, warning: bool) -> None:
        self.append((title, body))
        self.warnings.append(warning)
        for wanted, future in self._awaited:
            if wanted(title) and not future.done():
                future.set_result(body)

    def titled(self, wanted: Callable[[str], bool]) -> asyncio.Future[str]:
        future: asyncio.Future[str] = asyncio.get_event_loop().create_future()
        self._awaited.append((wanted, future))
        return future


@pytest.fixture
def shown(desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> Told:
    told = Told()
    monkeypatch.setattr(desktop.notifications, "_show", told)
    desktop.notifications.locale = "en_US"
    return told


def routine_id(desktop: Desktop, loop: qasync.QEventLoop, name: str) -> str:
    read = desktop.service.call(
        lambda e: e.store.conn.execute("SELECT id FROM routines WHERE name = ?", (name,)).fetchone()
    )
    return str(loop.run_until_complete(read)[0])


def test_an_overrun_names_its_routine_in_human_durations_and_opens_its_run(
    desktop: Desktop, loop: qasync.QEventLoop, shown: Told, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []

    def spy(_window: MainWindow, occurrence_id: str) -> None:
        opened.append(occurrence_id)

    monkeypatch.setattr(MainWindow, "open_run", spy, raising=False)
    add(desktop, loop, "backup")
    data = {"routine": "backup", "running_seconds": 3 * 3600.0, "usual_seconds": 240.0}
    overran = Event(
        10**6, T0, EventKind.OVERRUN, routine_id(desktop, loop, "backup"), "occ-1", data
    )
    desktop.service.eventsArrived.emit([overran])
    loop.run_until_complete(desktop.settle())
    assert shown == [("backup is taking much longer than usual", "running for 3 hr; usually 4 min")]
    assert shown.warnings == [False]  # a heads-up: nothing has gone wrong yet
    desktop.tray.icon.messageClicked.emit()
    assert opened == ["occ-1"] and desktop.window.isVisible()


def failure(n: int) -> tuple[Notice, str]:
    return Notice(NoticeKind.FAILED, f"r{n} failed", "exit 1", f"r{n}", f"run{n}", n), f"occ{n}"


def notifications(
    tmp_path: Path, clock: VirtualClock, told: list[tuple[str, str]]
) -> Notifications:
    async def unused(work: object) -> object:
        raise AssertionError("offered notices need no reading")

    def show(title: str, body: str, _warning: bool) -> None:
        told.append((title, body))

    return Notifications(show, unused, clock.monotonic, NoticeSettings(tmp_path))


def test_a_storm_shows_three_folds_the_rest_and_holds_what_comes_next(
    tmp_path: Path, qapp: QApplication
) -> None:
    clock, told = VirtualClock(T0, autojump=False), list[tuple[str, str]]()
    tell = notifications(tmp_path, clock, told)
    tell.offer([failure(n) for n in range(5)])
    assert told == [
        ("r0 failed", "exit 1"),
        ("r1 failed", "exit 1"),
        ("3 more runs failed", "r2, r3, r4"),
    ]
    assert tell.last == Shown("3 more runs failed", "r2, r3, r4")  # a fold opens the window
    tell.offer([failure(5)])
    assert len(told) == 3 and tell._flush.isActive()  # held: the window is full
    clock.advance(timedelta(seconds=61))
    tell._flush.timeout.emit()
    assert told[3:] == [("r5 failed", "exit 1")] and tell.last is not None
    assert tell.last.occurrence_id == "occ5"
    tell.stop()


def test_what_went_wrong_is_a_warning_and_what_was_missed_asleep_is_information(
    tmp_path: Path, qapp: QApplication, desktop: Desktop, monkeypatch: pytest.MonkeyPatch
) -> None:
    told = Told()
    tell = Notifications(told, None, VirtualClock(T0).monotonic, NoticeSettings(tmp_path))  # type: ignore[arg-type]
    missed = Notice(NoticeKind.WAKE, "While asleep", "35 moments of backup missed")
    tell.offer([failure(1), (missed, None)])
    tell.refused("backup is running: cancel it first")
    assert told.warnings == [True, False, True]
    icons: list[QSystemTrayIcon.MessageIcon] = []
    monkeypatch.setattr(
        desktop.tray.icon, "showMessage", lambda _t, _b, icon, _ms: icons.append(icon)
    )
    desktop.tray.notify("backup failed", "exit 1", True)
    desktop.tray.notify("While asleep", "35 moments of backup missed", False)
    assert icons == [QSystemTrayIcon.MessageIcon.Warning, QSystemTrayIcon.MessageIcon.Information]


def test_a_kind_turned_off_stays_off_and_is_not_shown(tmp_path: Path, qapp: QApplication) -> None:
    clock, told = VirtualClock(T0, autojump=False), list[tuple[str, str]]()
    tell = notifications(tmp_path, clock, told)
    assert tell.settings.is_on(NoticeKind.FAILED) and not tell.settings.is_on(NoticeKind.CANCELLED)
    tell.settings.set_on(NoticeKind.FAILED, False)
    tell.offer([failure(1)])
    assert told == []
    again = NoticeSettings(tmp_path)  # the next start
    assert not again.is_on(NoticeKind.FAILED) and NoticeKind.FAILED in again.off
    assert stat.S_IMODE(again.path.stat().st_mode) == 0o600  # private, like the store
    tell.stop()


def test_the_tray_switch_turns_a_kind_off_for_good(desktop: Desktop) -> None:
    switches = next(a.menu() for a in desktop.tray.menu.actions() if a.text() == "Notifications")
    failed = next(a for a in switches.actions() if a.objectName() == "notice:failed")
    assert failed.isChecked()
    failed.trigger()
    assert not NoticeSettings(desktop.data_dir).is_on(NoticeKind.FAILED)


def test_after_a_sleep_one_notification_says_what_was_missed(
    desktop: Desktop, loop: qasync.QEventLoop, shown: Told
) -> None:
    spec = RevisionSpec("*/5 * * * *", "UTC", ("/bin/true",))
    # 12:00 is the routine's first moment: it starts before the sleep (had the scheduler's
    # pass come after the suspend, the 12:00 moment would be missed too: 36, not 35)
    added = desktop.act(lambda e: e.operator.add_routine("backup", spec))
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.STARTED, doing=added)
    desktop.clock.suspend(timedelta(hours=3), notify=False)  # type: ignore[attr-defined]
    resumed = OsEvent("resumed", desktop.clock.now_utc(), "test", slept_seconds=3 * 3600.0)
    assert desktop.notifier is not None
    summary = shown.titled(lambda title: title == "While asleep")
    desktop.notifier.occurred.emit(resumed)  # as the OS says it: the scheduler wakes
    body = loop.run_until_complete(asyncio.wait_for(summary, 20))
    assert body == "35 moments of backup missed"
    assert [title for title, _ in shown].count("While asleep") == 1
    desktop.tray.icon.messageClicked.emit()
    loop.run_until_complete(desktop.window.settle())
    assert desktop.window.stack.currentWidget() is desktop.window.pages["timeline"]


def event(seq: int, kind: EventKind, occurrence: str | None = None, **data: object) -> Event:
    return Event(seq, T0, kind, "r", occurrence, dict(data))


def test_a_wake_or_a_start_is_summed_up_once_its_catch_up_started_if_anything_was_missed() -> None:
    watch = WakeWatch()
    assert watch.see([event(1, EventKind.SLEPT)]) is None  # nothing missed: no summary
    assert watch.see([event(2, EventKind.SKIPPED, "w", reason="missed")]) is None  # no wake
    down = [event(5, EventKind.DOWNTIME), event(6, EventKind.SKIPPED, "w", reason="missed")]
    assert watch.see([*down, event(7, EventKind.CLAIMED, "o")]) is None  # not started yet
    assert watch.see([event(8, EventKind.STARTED, "o")]) == 4
    assert watch.see([event(9, EventKind.SETTLED, "o")]) is None  # once
